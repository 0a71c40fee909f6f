package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/internal/testenv"
)

// TestOperatorProcess runs `msgbench operator` as a process, as its ServiceAccount with exactly
// the generated ClusterRole (config/rbac/role.yaml), against a real API server:
//   - its metrics answer only callers the API server authenticates and authorizes — no token
//     401, a ServiceAccount without the metrics-reader role (config/rbac/metrics_reader_role.yaml)
//     403, with it 200 — over HTTPS;
//   - SIGTERM stops the manager and the process exits 0 (before, the signal killed it).
func TestOperatorProcess(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	const ns = "msgbench-system"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	operatorToken := serviceAccountWithRole(t, cs, ns, "msgbench-operator", repo("config", "rbac", "role.yaml"))
	scraperToken := serviceAccountWithRole(t, cs, ns, "scraper", "")
	readerToken := serviceAccountWithRole(t, cs, ns, "reader", repo("config", "rbac", "metrics_reader_role.yaml"))

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: operatorToken}
	kc.Contexts["operator"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "operator"}
	kc.CurrentContext = "operator"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}

	metricsAddr, probeAddr := freeAddr(t), freeAddr(t)
	var out bytes.Buffer
	cmd := exec.Command(testbin.Msgbench(t), "operator", "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address="+probeAddr)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			if err := <-exited; err != nil {
				t.Logf("operator killed: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("operator output:\n%s", out.String())
		}
	}()

	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + probeAddr + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				// The metrics server starts beside the probes, not before them.
				var c net.Conn
				if c, err = net.Dial("tcp", metricsAddr); err == nil {
					_ = c.Close()
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz and the metrics port not ready within 30 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The certificate is self-signed: this checks who may read, not who serves.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed by design
	scrape := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "https://"+metricsAddr+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET /metrics: %v", err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		who, token string
		want       int
	}{{"no token", "", http.StatusUnauthorized}, {"a bad token", "not-a-token", http.StatusUnauthorized},
		{"a ServiceAccount without the metrics-reader role", scraperToken, http.StatusForbidden},
		{"a ServiceAccount with the metrics-reader role", readerToken, http.StatusOK}} {
		code, body := scrape(tc.token)
		if code != tc.want {
			t.Errorf("%s: GET /metrics answered %d, want %d: %.200s", tc.who, code, tc.want, body)
		}
		if code == http.StatusOK && !strings.Contains(body, "msgbench_benchmarks") {
			t.Errorf("%s: /metrics has no msgbench_benchmarks:\n%.500s", tc.who, body)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) || err != nil {
			t.Errorf("after SIGTERM the operator ended with %v (%s), want exit status 0", err, cmd.ProcessState)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the operator did not exit within 30 s of SIGTERM")
	}
}

// serviceAccountWithRole creates a ServiceAccount, binds the ClusterRole in roleFile to it
// (none when ""), and returns a token for it.
func serviceAccountWithRole(t *testing.T, cs kubernetes.Interface, ns, name, roleFile string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if roleFile != "" {
		data, err := os.ReadFile(roleFile)
		if err != nil {
			t.Fatal(err)
		}
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal(data, &role); err != nil {
			t.Fatal(err)
		}
		role.Name = fmt.Sprintf("%s-%s", name, role.Name)
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}
