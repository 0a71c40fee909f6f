package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/testenv"
)

// aioquicPython is the python of the virtual environment hack/aioquic.sh installs aioquic into
// (make setup runs it; cached under bin/tools). Without Python or PyPI the test skips, except
// in CI, where make setup must have installed it.
func aioquicPython(t *testing.T) (python, root string) {
	t.Helper()
	return testenv.Install(t, "aioquic.sh", "aioquic"), testenv.RepoRoot()
}

// aioquicResult is what test/earlydata/aioquic_early_post.py prints.
type aioquicResult struct {
	FirstStatus         int    `json:"first_status"`
	TicketMaxEarlyData  int    `json:"ticket_max_early_data"`
	SentBeforeHandshake bool   `json:"sent_before_handshake"`
	EarlyStatus         int    `json:"early_status"`
	EarlyBody           string `json:"early_body"`
	SessionResumed      bool   `json:"session_resumed"`
	EarlyDataAccepted   bool   `json:"early_data_accepted"`
	RetryAfterHandshake bool   `json:"retry_after_handshake"`
	RetryStatus         int    `json:"retry_status"`
}

// TestAioquicZeroRTTPost is issue #36 as it was found: aioquic, a third-party HTTP/3 client, resumes
// its session and sends a POST in 0-RTT. The gateway answers 425 Too Early and publishes nothing;
// the client's retry after the handshake is published, once. With spec.http.acceptEarlyPublishes
// the 0-RTT POST is published. Through a link of 100 ms each way, so the 0-RTT POST reaches the
// gateway a round trip before the client's Finished.
func TestAioquicZeroRTTPost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Python client through a 200 ms link")
	}
	python, root := aioquicPython(t)
	for _, accept := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "acceptEarlyPublishes"}[accept]
		t.Run(name, func(t *testing.T) {
			e := startEarly(t, accept)
			ca := filepath.Join(t.TempDir(), "ca.pem")
			if err := os.WriteFile(ca, e.caPEM, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			topic := "aioquic/" + name
			frames := e.subscribe(t, ctx, topic)
			host, port, _ := net.SplitHostPort(e.link.Addr())
			cmd := exec.CommandContext(ctx, python, filepath.Join(root, "test", "earlydata", "aioquic_early_post.py"),
				host, port, ca, "/topics/"+topic, "sent in 0-RTT by aioquic")
			out, err := cmd.Output()
			if err != nil {
				msg := err.Error()
				if ee, ok := errors.AsType[*exec.ExitError](err); ok {
					msg += ": " + string(ee.Stderr)
				}
				t.Fatalf("aioquic client: %s", msg)
			}
			var r aioquicResult
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("aioquic client printed %q: %v", out, err)
			}
			t.Logf("aioquic: %+v", r)
			if r.FirstStatus != 204 || r.TicketMaxEarlyData == 0 {
				t.Fatalf("the first connection: POST %d, ticket allows %d bytes of early data", r.FirstStatus, r.TicketMaxEarlyData)
			}
			if !r.SentBeforeHandshake || !r.SessionResumed || !r.EarlyDataAccepted {
				t.Fatalf("the POST did not ride in accepted 0-RTT data: %+v", r)
			}
			// The first connection's POST, then what the 0-RTT connection got published.
			if got := next(t, frames); string(got) != "full handshake" {
				t.Fatalf("subscriber got %q first", got)
			}
			if !accept {
				if r.EarlyStatus != 425 || !strings.Contains(r.EarlyBody, "RFC 8470") {
					t.Fatalf("0-RTT POST: %d %q, want 425 Too Early", r.EarlyStatus, r.EarlyBody)
				}
				if !r.RetryAfterHandshake || r.RetryStatus != 204 {
					t.Fatalf("the retry after the handshake: %d (sent after it: %v), want 204", r.RetryStatus, r.RetryAfterHandshake)
				}
			} else if r.EarlyStatus != 204 {
				t.Fatalf("0-RTT POST with acceptEarlyPublishes: %d %q, want 204", r.EarlyStatus, r.EarlyBody)
			}
			if got := next(t, frames); string(got) != "sent in 0-RTT by aioquic" {
				t.Fatalf("subscriber got %q", got)
			}
			// Once: the 425 published nothing, so nothing follows the retry.
			if p, ok := poll(frames, 300*time.Millisecond); ok {
				t.Fatalf("a second copy was published: %q", p)
			}
		})
	}
}
