package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/image"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/testenv"
)

// The broker images are checked the way a kubelet runs them: the image's root file system
// unpacked and mounted read-only, writable folders only where the operator's pods have emptyDir
// volumes, as the image's user, in namespaces of their own (network: its own loopback; PID:
// killing the namespace's first process ends every process in it, epmd included). Building an
// image gzips and hashes its whole layer (internal/image.Build, through go-containerregistry),
// which under -race is most of each test's time: the two tests run side by side (t.Parallel),
// each in namespaces and temporary folders of its own.

func TestRabbitMQImageServesMQTT(t *testing.T) {
	needRoot(t)
	t.Parallel()
	if _, err := os.Stat("/usr/lib/rabbitmq"); err != nil {
		t.Skip("Debian's rabbitmq-server is not installed (hack/apt-packages.sh rabbitmq-server)")
	}
	spec, err := rabbitMQSpec(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	root := unpack(t, spec)
	state, conf := t.TempDir(), t.TempDir()
	if err := os.Chown(state, 999, 999); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(conf, "rabbitmq.conf"), "listeners.tcp.default = 5672\nmqtt.listeners.tcp.default = 1883\nlog.console = true\nlog.file = false\n")
	write(t, filepath.Join(conf, "enabled_plugins"), "[rabbitmq_mqtt].\n")
	env := []string{"PATH=/opt/rabbitmq/sbin:/usr/lib/erlang/bin:/usr/bin:/bin", "HOME=/var/lib/rabbitmq", "LANG=C.UTF-8",
		"RABBITMQ_CONFIG_FILE=/etc/rabbitmq/rabbitmq.conf", "RABBITMQ_ENABLED_PLUGINS_FILE=/etc/rabbitmq/enabled_plugins",
		"RABBITMQ_MNESIA_BASE=/var/lib/rabbitmq/mnesia", "RABBITMQ_LOG_BASE=/var/lib/rabbitmq/log"}
	p := start(t, root, "999:999", map[string]string{state: "/var/lib/rabbitmq", conf: "/etc/rabbitmq"}, env, "rabbitmq-server")

	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := mqtt.Probe(ctx, p.dial, "127.0.0.1:1883", nil)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no MQTT CONNACK from the image's RabbitMQ: %v\n%s", err, p.out.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("RabbitMQ from the image answered an MQTT CONNECT as uid 999 on a read-only root; its output:\n%s", p.out.String())
}

func TestArtemisImageRunsJava(t *testing.T) {
	needRoot(t)
	t.Parallel()
	home := filepath.Join(testenv.RepoRoot(), "bin", "artemis", "2.40.0", "apache-artemis-2.40.0")
	if _, err := os.Stat(home); err != nil {
		t.Skip("no Artemis distribution: hack/artemis.sh fetches it")
	}
	if _, err := os.Stat("/usr/lib/jvm/java-17-openjdk-" + debArch()); err != nil {
		t.Skip("Debian's openjdk-17-jre-headless is not installed")
	}
	spec, err := artemisSpec(home, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	root := unpack(t, spec)
	env := append([]string{"HOME=/var/lib/artemis-instance"}, spec.Env...)
	for _, run := range []struct {
		args []string
		want string
	}{
		{[]string{"java", "-version"}, `openjdk version "17.`},
		// the distribution's boot jar loads every jar of lib/ and Artemis' CLI answers
		{[]string{"java", "-Dartemis.home=/opt/activemq-artemis", "-cp", "/opt/activemq-artemis/lib/artemis-boot.jar",
			"org.apache.activemq.artemis.boot.Artemis", "version"}, "2.40.0"},
	} {
		p := start(t, root, "1001:1001", map[string]string{t.TempDir(): "/var/lib/artemis-instance"}, env, run.args...)
		if err := p.wait(time.Minute); err != nil {
			t.Fatalf("%v: %v\n%s", run.args, err, p.out.String())
		}
		if out := p.out.String(); !strings.Contains(out, run.want) {
			t.Errorf("%v printed no %q:\n%s", run.args, run.want, out)
		} else {
			t.Logf("%v:\n%s", run.args, out)
		}
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: unpacks an image and runs it in namespaces with chroot")
	}
	if testing.Short() {
		t.Skip("-short: builds and runs a broker image")
	}
}

func write(t *testing.T, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// unpack builds the image and writes its root file system into a temporary folder, with the
// mount points and /etc/hosts a container runtime provides.
func unpack(t *testing.T, spec image.Spec) string {
	t.Helper()
	img, err := image.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, os.FileMode(h.Mode).Perm()|os.FileMode(h.Mode)&os.ModeSticky)
			if err == nil {
				err = os.Chmod(p, os.FileMode(h.Mode&0o777)|sticky(h.Mode))
			}
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, os.FileMode(h.Mode&0o777))
			}
		default:
			err = fmt.Errorf("unexpected entry %s (type %c)", h.Name, h.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"proc", "dev", "sys"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	host, _ := os.Hostname()
	write(t, filepath.Join(root, "etc", "hosts"), "127.0.0.1 localhost "+host+"\n")
	return root
}

func sticky(mode int64) os.FileMode {
	if mode&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan error
}

// start runs args in root as user ("uid:gid") with env, root mounted read-only and binds
// (host folder → path in root) writable, in new mount, network and PID namespaces. The test's
// cleanup kills it by PID (the namespace's processes die with it).
func start(t *testing.T, root, user string, binds map[string]string, env []string, args ...string) *proc {
	t.Helper()
	var sh strings.Builder
	sh.WriteString("set -e\nip link set lo up\n")
	// no writable /tmp: the operator's broker pods have none
	fmt.Fprintf(&sh, "mount --bind %[1]q %[1]q\nmount -t proc proc %[1]q/proc\nmount --rbind /dev %[1]q/dev\n", root)
	for src, dst := range binds {
		fmt.Fprintf(&sh, "mount --bind %q %q\n", src, filepath.Join(root, dst))
	}
	fmt.Fprintf(&sh, "mount -o remount,bind,ro %q\n", root)
	sh.WriteString("env -i")
	for _, e := range env {
		fmt.Fprintf(&sh, " %q", e)
	}
	chroot, err := exec.LookPath("chroot")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&sh, " %q --userspec=%s %q", chroot, user, root)
	for _, a := range args {
		fmt.Fprintf(&sh, " %q", a)
	}
	// sh stays the namespace's first process, as root: unshare --kill-child's SIGKILL on
	// unshare's death reaches it (a process that changed its user loses that), and with it
	// every process of the namespace dies.
	sh.WriteString(" &\nwait $!\n")
	p := &proc{out: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command("unshare", "--mount", "--net", "--pid", "--fork", "--kill-child", "sh", "-c", sh.String())
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if !p.exited() {
			_ = p.cmd.Process.Kill()
			_ = p.wait(10 * time.Second)
		}
	})
	return p
}

func (p *proc) exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

func (p *proc) wait(d time.Duration) error {
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

// dial connects from inside the process's network namespace (unshare entered it before
// forking, so it is unshare's own).
func (p *proc) dial(ctx context.Context, network, address string) (net.Conn, error) {
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", p.cmd.Process.Pid))
	if err != nil {
		return nil, err
	}
	defer func() { _ = ns.Close() }()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, err
	}
	defer func() { _ = own.Close() }()
	runtime.LockOSThread()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	// the socket belongs to the namespace it was created in, whichever thread uses it later
	var d net.Dialer
	c, err := d.DialContext(ctx, network, address)
	if rerr := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); rerr == nil {
		runtime.UnlockOSThread()
	} // else: the thread stays locked and Go discards it when this goroutine ends
	return c, err
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
