// Command kafkaclients compares pure-Go Kafka producers on one broker, for choosing the client
// of msgbench's Kafka driver (docs/benchmarks-kafka.md): franz-go and IBM's sarama, each
// producing the same records asynchronously with acks=1, linger 5 ms, batches of at most
// 16 KiB and 5 produce requests in flight (Java's defaults), and the client's CPU seconds per
// million records. Its own module, so the comparison's extra
// client never becomes a dependency of msgbench.
//
//	go run . -addr 127.0.0.1:9092 [-records 200000] [-size 1024] [-repeat 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9092", "bootstrap broker")
	records := flag.Int("records", 200000, "records per run")
	size := flag.Int("size", 1024, "value bytes")
	repeat := flag.Int("repeat", 3, "runs of each client, alternating")
	flag.Parse()
	value := make([]byte, *size)
	fmt.Printf("| run | client | records/s | CPU s per 1M records |\n| --- | --- | ---: | ---: |\n")
	for i := 1; i <= *repeat; i++ {
		for _, c := range []struct {
			name string
			fn   func(addr, topic string, n int, v []byte) error
		}{{"franz-go", franz}, {"sarama", saramaRun}} {
			topic := fmt.Sprintf("clients-%s-%d-%d", c.name, i, time.Now().UnixNano()%1e6)
			if err := create(*addr, topic); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			cpu0, t0 := cpu(), time.Now()
			if err := c.fn(*addr, topic, *records, value); err != nil {
				fmt.Fprintln(os.Stderr, c.name, err)
				os.Exit(1)
			}
			el, used := time.Since(t0), cpu()-cpu0
			fmt.Printf("| %d | %s | %.0f | %.2f |\n", i, c.name, float64(*records)/el.Seconds(), used.Seconds()*1e6/float64(*records))
		}
	}
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func create(addr, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, nil, topic)
	return err
}

func franz(addr, topic string, n int, v []byte) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(16384), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(10000), kgo.MaxProduceRequestsInflightPerBroker(5))
	if err != nil {
		return err
	}
	defer cl.Close()
	var mu sync.Mutex
	var first error
	for i := 0; i < n; i++ {
		cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(context.Background()); err != nil {
		return err
	}
	return first
}

func saramaRun(addr, topic string, n int, v []byte) error {
	cfg := sarama.NewConfig()
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	cfg.Producer.Flush.Bytes = 16384
	// Flush.Bytes only triggers a send; the batch cap is MaxMessageBytes (like Java's batch.size).
	cfg.Producer.MaxMessageBytes = 16384
	cfg.Net.MaxOpenRequests = 5
	cfg.Producer.Compression = sarama.CompressionNone
	cfg.Producer.Return.Successes = true
	cfg.ChannelBufferSize = 10000
	p, err := sarama.NewAsyncProducer([]string{addr}, cfg)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		var first error
		for got := 0; got < n; got++ {
			select {
			case <-p.Successes():
			case e := <-p.Errors():
				if first == nil {
					first = e.Err
				}
			}
		}
		done <- first
	}()
	for i := 0; i < n; i++ {
		p.Input() <- &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(v)}
	}
	err = <-done
	_ = p.Close()
	return err
}
