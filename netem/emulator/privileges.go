//go:build linux

package emulator

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Capability bits (linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// CheckPrivileges returns an error saying what to do when this process cannot create a link:
// network namespaces need CAP_SYS_ADMIN (unshare, setns), TUN devices and their addresses
// CAP_NET_ADMIN.
func CheckPrivileges() error {
	eff, err := effectiveCapabilities()
	if err != nil {
		return fmt.Errorf("link emulator: read capabilities: %w", err)
	}
	var missing []string
	if eff&(1<<capNetAdmin) == 0 {
		missing = append(missing, "CAP_NET_ADMIN")
	}
	if eff&(1<<capSysAdmin) == 0 {
		missing = append(missing, "CAP_SYS_ADMIN")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("the link emulator creates network namespaces and TUN devices, which needs CAP_NET_ADMIN and CAP_SYS_ADMIN (this process lacks %s): "+
		"run it as root (sudo msgbench …), or give the binary both capabilities once: sudo setcap cap_net_admin,cap_sys_admin+ep bin/msgbench",
		strings.Join(missing, " and "))
}

// effectiveCapabilities reads CapEff from /proc/self/status.
func effectiveCapabilities() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no CapEff line in /proc/self/status")
}
