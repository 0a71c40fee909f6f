package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/atomicfile/fulldisk"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/results/store"
)

func TestS3UploadToARealServer(t *testing.T) {
	s3, err := testenv.StartS3("results")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s3.Stop() }()
	st, err := store.New(&v1alpha1.ObjectStoreSpec{URL: "s3://results/runs/x", Endpoint: s3.Endpoint},
		store.Credentials{AccessKeyID: s3.AccessKeyID, SecretAccessKey: s3.SecretAccessKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutWithRetry(context.Background(), st, "ns/b/uid/result.json", []byte(`{"ok":true}`), 3); err != nil {
		t.Fatal(err)
	}
	got, err := s3.Object(context.Background(), "results", "runs/x/ns/b/uid/result.json")
	if err != nil || string(got) != `{"ok":true}` {
		t.Errorf("stored %q (%v)", got, err)
	}
	if u := st.URL("ns/b/uid/result.json"); u != "s3://results/runs/x/ns/b/uid/result.json" {
		t.Errorf("URL %s", u)
	}
	// Wrong credentials are refused, and the error says so after the retries.
	bad, _ := store.New(&v1alpha1.ObjectStoreSpec{URL: "s3://results/runs", Endpoint: s3.Endpoint}, store.Credentials{AccessKeyID: "x", SecretAccessKey: "y"})
	if err := store.PutWithRetry(context.Background(), bad, "k", []byte("v"), 1); err == nil {
		t.Error("upload with wrong credentials succeeded")
	}
}

func TestRetriesThenGivesUp(t *testing.T) {
	st, err := store.New(&v1alpha1.ObjectStoreSpec{URL: "s3://results/runs", Endpoint: "http://127.0.0.1:1"}, store.Credentials{AccessKeyID: "a", SecretAccessKey: "b"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = store.PutWithRetry(context.Background(), st, "k", []byte("v"), 2)
	if err == nil || !strings.Contains(err.Error(), "failed 2 times") || time.Since(start) < time.Second {
		t.Errorf("err %v after %v, want 2 attempts a second apart", err, time.Since(start))
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	st, err := store.New(&v1alpha1.ObjectStoreSpec{URL: "file://" + dir}, store.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), "a/b.json", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a", "b.json")); err != nil || string(b) != "x" {
		t.Errorf("%q %v", b, err)
	}
}

// TestFileStoreFullDisk: an object that does not fit is an error naming it, and leaves nothing
// under its key — not the part that fitted (#31) — nor a temporary file; one that fits is stored.
func TestFileStoreFullDisk(t *testing.T) {
	dir := fulldisk.Mount(t, 8192)
	st, err := store.New(&v1alpha1.ObjectStoreSpec{URL: "file://" + dir}, store.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("z"), 64<<10)
	err = st.Put(context.Background(), "local/run/1/result.json", big)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "local", "run", "1", "result.json")) || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("err %v, want no space left naming the object's file", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "local", "run", "1"))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	if err := st.Put(context.Background(), "local/run/1/result.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "local", "run", "1", "result.json")); string(b) != "{}\n" {
		t.Errorf("stored %q", b)
	}
}
