package http

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// bodyPool holds publish bodies between requests: a body is read, published and released within
// one request, so buffers are reused instead of allocated per message.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// publish handles POST /topics/<topic>: the body is the payload. 204 once the broker accepted
// it at the QoS (PUBACK, PUBCOMP; QoS 0: written to the broker's socket).
func (a *api) publish(w http.ResponseWriter, r *http.Request, topic string, qos byte, user, pass string) {
	passed := false
	defer func() {
		if !passed {
			a.failed.Add(1)
		}
	}()
	if r.ContentLength > a.limits.MaxBodyBytes {
		closeAfter(w, r)
		fail(w, http.StatusRequestEntityTooLarge, "body of "+strconv.FormatInt(r.ContentLength, 10)+" bytes exceeds the gateway's limit of "+strconv.FormatInt(a.limits.MaxBodyBytes, 10))
		return
	}
	if !acquire(a.publishing) {
		w.Header().Set("Retry-After", "1")
		fail(w, http.StatusTooManyRequests, "too many publishes in flight at the gateway; retry later")
		return
	}
	defer func() { <-a.publishing }()
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	payload, err := readBody(r, *bp, a.limits.MaxBodyBytes)
	*bp = payload[:0]
	if err != nil {
		if errors.Is(err, errTooLarge) {
			closeAfter(w, r)
			fail(w, http.StatusRequestEntityTooLarge, "body exceeds the gateway's limit of "+strconv.FormatInt(a.limits.MaxBodyBytes, 10)+" bytes")
		} else {
			fail(w, http.StatusBadRequest, "reading the body: "+err.Error())
		}
		return
	}
	p, err := a.pools.get(user, pass)
	if err != nil {
		brokerFailure(w, err)
		return
	}
	c, err := p.conn(r.Context())
	if err != nil {
		brokerFailure(w, err)
		return
	}
	reason, err := c.publish(r.Context(), topic, payload, qos)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client is gone
		}
		fail(w, http.StatusBadGateway, err.Error())
		return
	}
	if reason >= 0x80 {
		fail(w, http.StatusForbidden, "broker refused the message (reason code 0x"+strconv.FormatUint(uint64(reason), 16)+")")
		return
	}
	passed = true
	a.in.Add(1)
	w.Header()["Date"] = noDate
	w.WriteHeader(http.StatusNoContent)
}

// closeAfter makes an HTTP/1.x connection close after the response rather than read (and throw
// away) a body the gateway refused. HTTP/2 and HTTP/3 reset the request's stream instead, and
// forbid the Connection header.
func closeAfter(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}

// brokerFailure maps a broker connection error to a status.
func brokerFailure(w http.ResponseWriter, err error) {
	if errors.Is(err, errRefused) {
		w.Header().Set("WWW-Authenticate", `Basic realm="msgbench"`)
		fail(w, http.StatusUnauthorized, err.Error())
		return
	}
	w.Header().Set("Retry-After", "1")
	fail(w, http.StatusServiceUnavailable, err.Error())
}

var errTooLarge = errors.New("body too large")

// readBody reads the whole body into buf (grown as needed), at most limit bytes.
func readBody(r *http.Request, buf []byte, limit int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 {
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		_, err := io.ReadFull(r.Body, buf)
		return buf, err
	}
	// Chunked: read until EOF, refusing more than limit.
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
