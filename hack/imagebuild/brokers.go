package main

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/msgbench/msgbench/internal/image"
)

// rabbitMQSpec: Debian's rabbitmq-server and the erlang-* packages it needs, as installed here
// (hack/apt-packages.sh rabbitmq-server), the libraries of the Erlang runtime, and the few
// programs its shell scripts run. It follows the official image's conventions, which the
// operator's pods (controllers/resources/broker_rabbitmq.go) rely on: `rabbitmq-server` on PATH
// from /opt/rabbitmq/sbin, user rabbitmq 999, HOME /var/lib/rabbitmq; configuration comes from
// RABBITMQ_CONFIG_FILE / RABBITMQ_ENABLED_PLUGINS_FILE, state from RABBITMQ_MNESIA_BASE and
// RABBITMQ_LOG_BASE, so the root file system may be read-only.
func rabbitMQSpec(labels map[string]string) (image.Spec, error) {
	pkgs, err := image.DebianDependencies("rabbitmq-server", func(name string) bool { return strings.HasPrefix(name, "erlang-") })
	if err != nil {
		return image.Spec{}, fmt.Errorf("rabbitmq: %w (hack/apt-packages.sh rabbitmq-server installs it)", err)
	}
	files, dirs, err := image.DebianFiles(pkgs, func(p string) bool {
		// the Debian wrappers (su, chown, systemd), its management CLI (Python) and its OCF agent
		// are not for a container
		return image.Unneeded(p) || strings.HasPrefix(p, "/usr/lib/ocf") || strings.HasPrefix(p, "/usr/lib/rabbitmq/autocomplete") ||
			p == "/usr/bin/rabbitmqadmin" || strings.HasPrefix(p, "/usr/sbin/rabbitmq") || p == "/usr/lib/rabbitmq/bin/rabbitmq-script-wrapper"
	})
	if err != nil {
		return image.Spec{}, err
	}
	sbins, err := filepath.Glob("/usr/lib/rabbitmq/lib/rabbitmq_server-*/sbin")
	if err != nil || len(sbins) != 1 {
		return image.Spec{}, fmt.Errorf("rabbitmq: want one /usr/lib/rabbitmq/lib/rabbitmq_server-*/sbin, found %v", sbins)
	}
	scripts, err := os.ReadDir(sbins[0])
	if err != nil {
		return image.Spec{}, err
	}
	var links []image.File
	for _, s := range scripts {
		links = append(links, image.File{Path: "/opt/rabbitmq/sbin/" + s.Name(), Link: path.Join(sbins[0], s.Name())})
	}
	// What rabbitmq-server, rabbitmq-env, rabbitmq-defaults and erl run (dirname, basename,
	// readlink, expr, date), and what the broker itself runs through /bin/sh: df (the disk
	// free-space monitor, `df -kP`) and getconf (the memory page size).
	tools, err := hostPrograms("/usr/bin", "dash", "dirname", "basename", "readlink", "expr", "date", "df", "getconf")
	if err != nil {
		return image.Spec{}, err
	}
	tools = append(tools, image.File{Path: "/bin/sh", Link: "/usr/bin/dash"})
	files = image.Merge(files, tools, links)
	libs, missing, err := image.Libraries(files)
	if err != nil {
		return image.Spec{}, err
	}
	if len(missing) > 0 {
		return image.Spec{}, fmt.Errorf("rabbitmq: libraries of %v are not installed here", missing)
	}
	labels["org.opencontainers.image.description"] = "RabbitMQ and Erlang from Debian's packages with their shared libraries, nothing else"
	return image.Spec{
		Files: image.Merge(image.Passwd("rabbitmq", 999, "/var/lib/rabbitmq"), files, libs),
		Dirs:  append(dirs, "/tmp", "/var/lib/rabbitmq", "/var/log/rabbitmq", "/etc/rabbitmq"),
		Cmd:   []string{"rabbitmq-server"},
		User:  "999:999",
		Env: []string{"PATH=/opt/rabbitmq/sbin:/usr/lib/erlang/bin:/usr/bin:/bin", "HOME=/var/lib/rabbitmq",
			"RABBITMQ_DATA_DIR=/var/lib/rabbitmq", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"},
		WorkingDir: "/var/lib/rabbitmq",
		Labels:     labels,
	}, nil
}

// artemisSpec: Debian's openjdk-17-jre-headless as installed here (with the configuration it
// links into /etc/java-17-openjdk) and the libraries ldd finds for it, `java` on PATH, and the
// Apache Artemis distribution (hack/artemis.sh) at /opt/activemq-artemis; user artemis 1001, no
// shell. The operator runs `java -cp /opt/activemq-artemis/lib/artemis-boot.jar …
// org.apache.activemq.artemis.boot.Artemis run` with an instance folder of its own.
func artemisSpec(home string, labels map[string]string) (image.Spec, error) {
	if _, err := os.Stat(filepath.Join(home, "lib", "artemis-boot.jar")); err != nil {
		return image.Spec{}, fmt.Errorf("artemis: %s is not an Artemis distribution (hack/artemis.sh fetches one): %w", home, err)
	}
	const jre = "openjdk-17-jre-headless"
	jvm := "/usr/lib/jvm/java-17-openjdk-" + debArch()
	files, dirs, err := image.DebianFiles([]string{jre}, func(p string) bool {
		// ct.sym is only javac's
		return image.Unneeded(p) || p == jvm+"/lib/ct.sym" || strings.HasPrefix(p, "/usr/lib/jvm/.")
	})
	if err != nil {
		return image.Spec{}, fmt.Errorf("artemis: %w (Debian: apt-get install %s)", err, jre)
	}
	targets, err := image.LinkTargets(files)
	if err != nil {
		return image.Spec{}, err
	}
	files = image.Merge(files, targets, []image.File{{Path: "/usr/bin/java", Link: jvm + "/bin/java"}})
	libs, missing, err := image.Libraries(files)
	if err != nil {
		return image.Spec{}, err
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "imagebuild: artemis: libraries not installed here (not needed by a headless broker): %v\n", missing)
	}
	dist, distDirs, err := image.Tree(home, "/opt/activemq-artemis")
	if err != nil {
		return image.Spec{}, err
	}
	labels["org.opencontainers.image.description"] = "Apache ActiveMQ Artemis on Debian's OpenJDK 17 JRE with its shared libraries, nothing else"
	return image.Spec{
		Files:      image.Merge(image.Passwd("artemis", 1001, "/var/lib/artemis-instance"), files, libs, dist),
		Dirs:       append(append(dirs, distDirs...), "/tmp", "/var/lib/artemis-instance"),
		User:       "1001:1001",
		Env:        []string{"PATH=" + jvm + "/bin:/usr/bin:/bin", "JAVA_HOME=" + jvm, "ARTEMIS_HOME=/opt/activemq-artemis", "LANG=C.UTF-8"},
		WorkingDir: "/var/lib/artemis-instance",
		Labels:     labels,
	}, nil
}

// hostPrograms returns the named programs of this machine as image files in dir.
func hostPrograms(dir string, names ...string) ([]image.File, error) {
	var files []image.File
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		files = append(files, image.File{Path: path.Join(dir, n), Src: p, Mode: 0o755})
	}
	return files, nil
}

// debArch is Debian's name of this machine's architecture (the JRE's folder is named with it).
func debArch() string {
	out, err := exec.Command("dpkg", "--print-architecture").Output()
	if err != nil {
		return "amd64"
	}
	return strings.TrimSpace(string(out))
}
