// Package store uploads result documents to where spec.results.objectStore says: an
// S3-compatible bucket (through minio-go, a maintained S3 client that works with AWS S3, MinIO,
// Ceph, versitygw, …) or a local folder (file:// URLs).
package store

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/atomicfile"
	"github.com/msgbench/msgbench/internal/localaddr"
)

// Store puts objects under a base URL.
type Store interface {
	// Put stores data under key (a slash-separated path below the store's base).
	Put(ctx context.Context, key string, data []byte) error
	// URL is the address of key, as users see it (s3://bucket/prefix/key or file:///…).
	URL(key string) string
	// Check finds out, without storing anything, whether Put can work: the folder can be
	// written, or the bucket exists and the credentials may see it. Run it before a run starts.
	Check(ctx context.Context) error
}

// Credentials for an S3 store.
type Credentials struct {
	AccessKeyID, SecretAccessKey string
}

// New opens the store of spec; creds are needed for s3:// URLs unless the endpoint allows
// anonymous writes.
func New(spec *v1alpha1.ObjectStoreSpec, creds Credentials) (Store, error) {
	u, err := url.Parse(spec.URL)
	if err != nil {
		return nil, fmt.Errorf("spec.results.objectStore.url: %w", err)
	}
	switch u.Scheme {
	case "file":
		return &fileStore{root: u.Path}, nil
	case "s3":
		return newS3(u, spec, creds)
	default:
		return nil, fmt.Errorf("spec.results.objectStore.url: scheme %q, want s3 or file", u.Scheme)
	}
}

// PutWithRetry retries Put with exponential backoff (1 s, 2 s, 4 s …) up to attempts times.
func PutWithRetry(ctx context.Context, s Store, key string, data []byte, attempts int) error {
	var err error
	wait := time.Second
	for i := 0; i < attempts; i++ {
		if err = s.Put(ctx, key, data); err == nil {
			return nil
		}
		if i == attempts-1 {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		}
		wait *= 2
	}
	return fmt.Errorf("upload %s failed %d times: %w", s.URL(key), attempts, err)
}

type fileStore struct{ root string }

func (f *fileStore) Put(_ context.Context, key string, data []byte) error {
	p := filepath.Join(f.root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// Atomic, as every result file msgbench writes: a full disk leaves the key absent (or as it
	// was), never a truncated object.
	return atomicfile.WriteFile(p, data, 0o644)
}

func (f *fileStore) URL(key string) string { return "file://" + path.Join(f.root, key) }

func (f *fileStore) Check(context.Context) error {
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		return fmt.Errorf("spec.results.objectStore.url: %w", err)
	}
	probe, err := os.CreateTemp(f.root, ".msgbench-check-")
	if err != nil {
		return fmt.Errorf("spec.results.objectStore.url: %s is not writable: %w", f.root, err)
	}
	_ = probe.Close()
	return os.Remove(probe.Name())
}

type s3Store struct {
	client         *minio.Client
	bucket, prefix string
}

func newS3(u *url.URL, spec *v1alpha1.ObjectStoreSpec, creds Credentials) (*s3Store, error) {
	endpoint, secure := "s3.amazonaws.com", true
	if spec.Endpoint != "" {
		e, err := url.Parse(spec.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("spec.results.objectStore.endpoint: %w", err)
		}
		endpoint, secure = e.Host, e.Scheme == "https"
	}
	var cr *credentials.Credentials
	if creds.AccessKeyID != "" {
		cr = credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, "")
	} else {
		cr = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	}
	c, err := minio.New(endpoint, &minio.Options{Creds: cr, Secure: secure, Region: spec.Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return nil, fmt.Errorf("spec.results.objectStore: %w", err)
	}
	return &s3Store{client: c, bucket: u.Host, prefix: strings.Trim(u.Path, "/")}, nil
}

func (s *s3Store) key(k string) string {
	if s.prefix == "" {
		return k
	}
	return s.prefix + "/" + k
}

func (s *s3Store) Put(ctx context.Context, key string, data []byte) error {
	_, err := s.client.PutObject(ctx, s.bucket, s.key(key), bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/json"})
	return err
}

func (s *s3Store) URL(key string) string { return "s3://" + s.bucket + "/" + s.key(key) }

func (s *s3Store) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("spec.results.objectStore: bucket %s at %s: %w", s.bucket, s.client.EndpointURL().Host, err)
	}
	if !ok {
		return fmt.Errorf("spec.results.objectStore.url: bucket %s does not exist at %s", s.bucket, s.client.EndpointURL().Host)
	}
	return nil
}

// LocalOnly refuses an object store a run on this machine must not reach (internal/localaddr):
// the S3 endpoint must be localhost, an IP address or a name in /etc/hosts; a cluster Service
// name such as minio.minio.svc exists only inside a cluster, and no endpoint means AWS S3.
func LocalOnly(spec *v1alpha1.ObjectStoreSpec) error {
	if spec == nil || strings.HasPrefix(spec.URL, "file://") {
		return nil
	}
	const field = "spec.results.objectStore.endpoint"
	fix := "a local run can also store results in a folder: --set results.objectStore.url=file:///PATH"
	if spec.Endpoint == "" {
		return fmt.Errorf("%s: unset, which means AWS S3, outside this machine; give an endpoint on this machine (e.g. --set results.objectStore.endpoint=http://127.0.0.1:9000), or %s", field, fix)
	}
	e, err := url.Parse(spec.Endpoint)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	if err := localaddr.Check(field, e.Hostname()); err != nil {
		return fmt.Errorf("%w; or %s", err, fix)
	}
	return nil
}
