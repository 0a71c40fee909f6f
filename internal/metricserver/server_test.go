package metricserver

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

func scrape(t *testing.T, s *Server, query string) {
	t.Helper()
	resp, err := http.Get("http://" + s.Addr() + "/metrics" + query)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
}

// WaitScrape: nobody scraped, no wait; otherwise every scraper seen must come back once.
func TestWaitScrape(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	start := time.Now()
	if s.WaitScrape(ctx, 5*time.Second) || time.Since(start) > time.Second {
		t.Fatalf("waited %v with no scraper", time.Since(start))
	}
	scrape(t, s, "?scraper=a")
	scrape(t, s, "?scraper=b")
	done := make(chan bool, 1)
	go func() { done <- s.WaitScrape(ctx, 10*time.Second) }()
	time.Sleep(100 * time.Millisecond)
	scrape(t, s, "?scraper=a")
	select {
	case <-done:
		t.Fatal("returned before scraper b came back")
	case <-time.After(200 * time.Millisecond):
	}
	scrape(t, s, "?scraper=b")
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("WaitScrape: false after both scraped")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitScrape did not return after both scraped")
	}
	if !s.Scraped() {
		t.Error("Scraped() false")
	}
	if _, err := Listen("nonsense"); err == nil {
		t.Error("Listen accepted an address without a port")
	}
}
