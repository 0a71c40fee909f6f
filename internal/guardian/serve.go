package guardian

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Main is the guardian process: it ignores the signals that end msgbench (it ends by itself once
// msgbench has), says it is ready on stdout, serves the pipe on stdin and returns the exit status.
func Main() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGPIPE, syscall.SIGTSTP)
	// Ready: Start waits for this byte on stdout.
	_, _ = os.Stdout.Write([]byte{'\n'})
	_ = os.Stdout.Close()
	if err := Serve(os.Stdin, os.Stderr, os.Getppid()); err != nil {
		fmt.Fprintf(os.Stderr, "msgbench guardian: %v\n", err)
		return 1
	}
	return 0
}

// Serve reads the commands of msgbench, process parent, from in until end of file, then cleans up
// what is still registered. It reports on log only when it had something to clean up.
func Serve(in io.Reader, log io.Writer, parent int) error {
	j := &job{parent: parent, pids: map[int]uint64{}, dirs: map[string]bool{}, netns: map[int]*os.File{}}
	readErr := scanLines(in, j.handle)
	done := j.cleanup()
	if len(done) > 0 {
		fmt.Fprintf(log, "msgbench guardian: msgbench (pid %d) ended without stopping everything it started; %s\n", parent, strings.Join(done, "; "))
	}
	return readErr
}

// job is what msgbench has told the guardian about and not withdrawn.
type job struct {
	parent int
	pids   map[int]uint64   // PID → start time
	dirs   map[string]bool  // folders
	netns  map[int]*os.File // msgbench's descriptor → the guardian's own hold on the namespace
}

func (j *job) handle(verb, arg string) {
	switch verb {
	case "pid":
		p, s, _ := strings.Cut(arg, " ")
		pid, err1 := strconv.Atoi(p)
		start, err2 := strconv.ParseUint(s, 10, 64)
		if err1 == nil && err2 == nil && pid > 0 {
			j.pids[pid] = start
		}
	case "forget-pid":
		if pid, err := strconv.Atoi(arg); err == nil {
			delete(j.pids, pid)
		}
	case "dir":
		// Registered just before msgbench creates it; removable checks it again at the end.
		if validPath(arg) == nil {
			j.dirs[arg] = true
		}
	case "forget-dir":
		delete(j.dirs, arg)
	case "netns":
		fd, err := strconv.Atoi(arg)
		if err != nil {
			return
		}
		if old := j.netns[fd]; old != nil {
			_ = old.Close()
			delete(j.netns, fd)
		}
		// Holding the namespace keeps its identity (the inode) from being reused by another one
		// while msgbench's processes may still live in it.
		f, err := os.Open(fmt.Sprintf("/proc/%d/fd/%d", j.parent, fd))
		if err != nil {
			return // msgbench closed it already, or this system does not allow it: Pdeathsig remains
		}
		if ns, err := namespaceOf(f); err != nil || !strings.HasPrefix(ns, "net:[") {
			_ = f.Close()
			return
		}
		j.netns[fd] = f
	case "forget-netns":
		if fd, err := strconv.Atoi(arg); err == nil {
			if f := j.netns[fd]; f != nil {
				_ = f.Close()
				delete(j.netns, fd)
			}
		}
	}
}

// cleanup kills what is left, waits for it to go, removes the folders and says what it did.
func (j *job) cleanup() []string {
	var done []string
	var killed []int
	starts := map[int]uint64{}
	pids := sortedKeys(j.pids)
	for _, pid := range pids {
		want := j.pids[pid]
		if got, err := startTime(pid); err != nil || got != want || state(pid) == 'Z' {
			continue // gone, or the PID is another process's now
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
			starts[pid] = want
			done = append(done, fmt.Sprintf("killed pid %d", pid))
		}
	}
	for _, fd := range sortedKeys(j.netns) {
		f := j.netns[fd]
		ns, err := namespaceOf(f)
		if err != nil {
			continue
		}
		for _, pid := range inNamespace(ns) {
			if _, seen := starts[pid]; seen {
				continue
			}
			start, err := startTime(pid)
			if err != nil {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, pid)
				starts[pid] = start
				done = append(done, fmt.Sprintf("killed pid %d in network namespace %s", pid, ns))
			}
		}
	}
	// A killed process may still finish the system call it was in (writing a file, say): remove
	// the folders once it is gone.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range killed {
		for time.Now().Before(deadline) {
			if got, err := startTime(pid); err != nil || got != starts[pid] || state(pid) == 'Z' {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, fd := range sortedKeys(j.netns) {
		_ = j.netns[fd].Close()
		delete(j.netns, fd)
	}
	dirs := make([]string, 0, len(j.dirs))
	for d := range j.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if !exists(d) {
			continue
		}
		if err := removable(d); err != nil {
			done = append(done, fmt.Sprintf("left %s: %v", d, err))
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			done = append(done, fmt.Sprintf("could not remove %s: %v", d, err))
			continue
		}
		done = append(done, "removed "+d)
	}
	return done
}

// removable checks a folder before the guardian removes it: an absolute, clean path whose name
// starts with msgbench-, a real folder (not a symbolic link) that this user owns.
func removable(path string) error {
	if err := validPath(path); err != nil {
		return err
	}
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("not a folder")
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by uid %d", sys.Uid)
	}
	return nil
}

func validPath(path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || !strings.HasPrefix(filepath.Base(path), "msgbench-") {
		return fmt.Errorf("not an absolute msgbench-* path")
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// namespaceOf is what a namespace descriptor names, e.g. "net:[4026532843]".
func namespaceOf(f *os.File) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
}

// inNamespace lists the processes (this one excluded) whose network namespace is ns.
func inNamespace(ns string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if link, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil && link == ns {
			out = append(out, pid)
		}
	}
	return out
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
