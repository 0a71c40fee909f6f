package testenv

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// S3 is a real S3-compatible server (versitygw over a temporary folder) on a loopback port.
type S3 struct {
	Endpoint                     string // http://127.0.0.1:port
	AccessKeyID, SecretAccessKey string
	// Root is the folder holding the buckets: bucket b, object k is Root/b/k.
	Root string
	cmd  *exec.Cmd
	log  bytes.Buffer
}

// StartS3 builds (hack/versitygw.sh, cached) and starts versitygw with the given buckets.
func StartS3(buckets ...string) (*S3, error) {
	out, err := exec.Command(filepath.Join(RepoRoot(), "hack", "versitygw.sh")).Output()
	if err != nil {
		return nil, fmt.Errorf("hack/versitygw.sh: %w", err)
	}
	bin := string(bytes.TrimSpace(out))
	root, err := os.MkdirTemp("", "msgbench-s3-")
	if err != nil {
		return nil, err
	}
	for _, b := range buckets {
		if err := os.MkdirAll(filepath.Join(root, b), 0o755); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &S3{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), AccessKeyID: "msgbench", SecretAccessKey: "msgbench-secret-key", Root: root}
	s.cmd = exec.Command(bin, "--access", s.AccessKeyID, "--secret", s.SecretAccessKey, "--port", "127.0.0.1:"+strconv.Itoa(port), "posix", "--nometa", root)
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return nil, fmt.Errorf("versitygw did not listen within 10s: %s", s.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server by PID and removes its folder.
func (s *S3) Stop() error {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	return os.RemoveAll(s.Root)
}

// Object reads an object straight from the server's folder.
func (s *S3) Object(_ context.Context, bucket, key string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.Root, bucket, filepath.FromSlash(key)))
}
