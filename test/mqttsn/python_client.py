"""Drives mqtt-sn-12 (PyPI), a Python MQTT-SN 1.2 client not written here, against an MQTT-SN
gateway, through the library's own API only (MqttSnClient: open, send_connect, send_register,
send_publish_with_id, send_subscribe, polling, send_disconnect, close). gateway/mqttsn's
TestPythonClient runs it with the python hack/mqttsn-python.sh installs.

    python_client.py publish   HOST PORT CLIENT_ID TOPIC QOS COUNT PAYLOAD_PREFIX
        CONNECT, REGISTER TOPIC, COUNT PUBLISHes at QOS (payload PREFIX-0 .. PREFIX-<COUNT-1>),
        DISCONNECT; prints {"topic_id": ID, "published": COUNT}.
    python_client.py subscribe HOST PORT CLIENT_ID TOPIC QOS COUNT TIMEOUT_S
        CONNECT, SUBSCRIBE TOPIC at QOS, prints {"subscribed": TOPIC_ID} once the SUBACK came, then
        one {"topic": NAME, "qos": Q, "payload": TEXT} per PUBLISH that arrives until COUNT came
        or TIMEOUT_S passed; DISCONNECT.

Every line on stdout is one JSON object, flushed at once. A failure exits 1 with the library's
message on stderr.
"""
import json
import sys
import time

from mqttsn12.MqttSnConstants import MqttSnConstants
from mqttsn12.client.MqttSnClient import MqttSnClient, MqttSnListener


def emit(obj):
    print(json.dumps(obj), flush=True)


def connect(host, port, client_id):
    c = MqttSnClient()
    c.set_client_id(client_id)
    c.set_timeout(10)
    c.open(host, port)
    c.send_connect()
    return c


def publish(host, port, client_id, topic, qos, count, prefix):
    c = connect(host, port, client_id)
    topic_id = c.send_register(topic)
    for i in range(count):
        c.send_publish_with_id(topic_id, MqttSnConstants.TOPIC_TYPE_NORMAL, f"{prefix}-{i}".encode(), qos)
    emit({"topic_id": topic_id, "published": count})
    c.send_disconnect()
    c.close()


class Printer(MqttSnListener):
    def __init__(self):
        self.count = 0

    def message_arrived(self, msg):
        self.count += 1
        emit({"topic": msg.get_topic_name(), "qos": msg.get_qos(), "payload": msg.get_payload().decode()})


def subscribe(host, port, client_id, topic, qos, count, timeout):
    c = connect(host, port, client_id)
    printer = Printer()
    c.send_subscribe(topic, qos, printer)
    emit({"subscribed": c.search_topic_id(topic)})
    deadline = time.monotonic() + timeout
    while printer.count < count and time.monotonic() < deadline:
        c.polling()
        time.sleep(0.005)
    c.send_disconnect()
    c.close()


def main(argv):
    cmd, host, port, client_id, topic, qos, count = argv[1], argv[2], int(argv[3]), argv[4], argv[5], int(argv[6]), int(argv[7])
    if cmd == "publish":
        publish(host, port, client_id, topic, qos, count, argv[8])
    elif cmd == "subscribe":
        subscribe(host, port, client_id, topic, qos, count, float(argv[8]))
    else:
        raise SystemExit(f"unknown command {cmd!r}")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Exception as e:  # the library raises MqttSnClientException and socket errors
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
