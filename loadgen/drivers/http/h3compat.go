package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/msgbench/msgbench/internal/wire"
)

// rtExchanger carries POSTs through a clientConn's RoundTrip, a goroutine per request: the
// HTTP/3 path until msgbench's own (h3.go) replaces it.
type rtExchanger struct {
	cc         clientConn
	counters   func() wire.Counters
	url        *url.URL
	hdr        http.Header
	host       string
	onResponse responseFunc
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	mu         sync.Mutex
	closed     bool
	snapshot   wire.Counters
}

func (d *driver) openH3RoundTrip(ctx context.Context, tlsConf *tls.Config, head requestHead, onResponse responseFunc) (exchanger, error) {
	cc, counters, err := d.open(ctx, tlsConf, false)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(head.scheme + "://" + head.authority + head.path)
	if err != nil {
		_ = cc.Close()
		return nil, err
	}
	e := &rtExchanger{cc: cc, counters: counters, url: u, host: head.authority, onResponse: onResponse,
		hdr: http.Header{"Content-Type": {"application/octet-stream"}}}
	if head.auth != "" {
		e.hdr.Set("Authorization", head.auth)
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	return e, nil
}

func (e *rtExchanger) Post(payload []byte, sentAt int64, _ bool) error {
	if err := e.Err(); err != nil {
		return err
	}
	body := append([]byte(nil), payload...)
	req := (&http.Request{Method: http.MethodPost, URL: e.url, Host: e.host, Header: e.hdr,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}).WithContext(e.ctx)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		resp, err := e.cc.RoundTrip(req)
		if err != nil {
			e.onResponse(sentAt, 0, err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		e.onResponse(sentAt, resp.StatusCode, nil)
	}()
	return nil
}

func (e *rtExchanger) Flush() error { return nil }

func (e *rtExchanger) Err() error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return errClosed
	}
	return e.cc.Err()
}

func (e *rtExchanger) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.snapshot = e.counters()
	e.mu.Unlock()
	e.cancel()
	_ = e.cc.Close()
	return nil
}

func (e *rtExchanger) Counters() wire.Counters {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return e.snapshot
	}
	return e.counters()
}
