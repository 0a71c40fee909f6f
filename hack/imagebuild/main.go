// Command imagebuild writes msgbench's container images as docker-archive tarballs, with no
// container engine or registry (hack/images.sh runs it; see docs/install.md):
//
//	imagebuild msgbench  --binary bin/image/msgbench --tag ghcr.io/msgbench/msgbench:v0.1.0 --out F
//	imagebuild mosquitto --binary /usr/sbin/mosquitto --tag ghcr.io/msgbench/mosquitto:2.0.11 --out F
//	imagebuild pause     --binary bin/image/pause --tag localhost/msgbench/pause:1 --out F
//	imagebuild rabbitmq  --tag ghcr.io/msgbench/rabbitmq:3.10.8 --out F
//	imagebuild artemis   --artemis-home bin/artemis/2.40.0/apache-artemis-2.40.0 --tag ghcr.io/msgbench/artemis:2.40.0 --out F
//
// msgbench: the static binary at /msgbench (the entrypoint), user nonroot 65532, CA
// certificates for HTTPS object stores, nothing else (no shell). mosquitto: Debian's binary at
// /usr/sbin/mosquitto with the shared libraries ldd finds, user mosquitto 1883, runs with a
// read-only root file system. pause: the pod sandbox's process. rabbitmq and artemis: see
// brokers.go.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/msgbench/msgbench/internal/image"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: imagebuild msgbench|mosquitto|pause|rabbitmq|artemis [--binary FILE] --tag TAG [--tag TAG…] --out FILE")
	}
	kind := args[0]
	fs := flag.NewFlagSet(kind, flag.ContinueOnError)
	binary := fs.String("binary", "", "the binary to put into the image")
	out := fs.String("out", "", "docker-archive tarball to write")
	caCerts := fs.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle for the msgbench image (\"\" for none)")
	version := fs.String("version", "", "org.opencontainers.image.version label")
	artemisHome := fs.String("artemis-home", "", "the unpacked Apache Artemis distribution (artemis image)")
	revision := fs.String("revision", "", "org.opencontainers.image.revision label")
	var tags multi
	fs.Var(&tags, "tag", "image reference (repeatable)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *out == "" || len(tags) == 0 {
		return fmt.Errorf("%s: --out and --tag are required", kind)
	}
	if *binary == "" && (kind == "msgbench" || kind == "mosquitto" || kind == "pause") {
		return fmt.Errorf("%s: --binary is required", kind)
	}
	labels := map[string]string{"org.opencontainers.image.source": "https://github.com/msgbench/msgbench"}
	if *version != "" {
		labels["org.opencontainers.image.version"] = *version
	}
	if *revision != "" {
		labels["org.opencontainers.image.revision"] = *revision
	}
	var spec image.Spec
	switch kind {
	case "msgbench":
		spec = image.Spec{
			Files:      append(image.Passwd("nonroot", 65532, "/home/nonroot"), image.File{Path: "/msgbench", Src: *binary, Mode: 0o755}),
			Dirs:       []string{"/tmp", "/home/nonroot"},
			Entrypoint: []string{"/msgbench"},
			User:       "65532:65532",
			WorkingDir: "/home/nonroot",
			Env:        []string{"PATH=/"},
			Labels:     labels,
		}
		if *caCerts != "" {
			spec.Files = append(spec.Files, image.File{Path: "/etc/ssl/certs/ca-certificates.crt", Src: *caCerts})
		}
		labels["org.opencontainers.image.description"] = "msgbench: operator, load-generator workers and protocol gateways (one static binary)"
	case "mosquitto":
		libs, err := image.SharedLibraries(*binary)
		if err != nil {
			return err
		}
		spec = image.Spec{
			Files:      append(append(image.Passwd("mosquitto", 1883, "/var/lib/mosquitto"), libs...), image.File{Path: "/usr/sbin/mosquitto", Src: *binary, Mode: 0o755}),
			Dirs:       []string{"/tmp", "/etc/mosquitto", "/var/lib/mosquitto"},
			Entrypoint: []string{"/usr/sbin/mosquitto"},
			Cmd:        []string{"-c", "/etc/mosquitto/msgbench/mosquitto.conf"},
			User:       "1883:1883",
			WorkingDir: "/var/lib/mosquitto",
			Env:        []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
			Labels:     labels,
		}
		labels["org.opencontainers.image.description"] = "Eclipse Mosquitto from Debian's package with its shared libraries, nothing else"
	case "pause":
		spec = image.Spec{
			Files:      []image.File{{Path: "/pause", Src: *binary, Mode: 0o755}},
			Entrypoint: []string{"/pause"},
			User:       "65535:65535",
			Labels:     labels,
		}
	case "rabbitmq":
		var err error
		if spec, err = rabbitMQSpec(labels); err != nil {
			return err
		}
	case "artemis":
		if *artemisHome == "" {
			return fmt.Errorf("artemis: --artemis-home is required")
		}
		var err error
		if spec, err = artemisSpec(*artemisHome, labels); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown image %q: msgbench, mosquitto, pause, rabbitmq or artemis", kind)
	}
	img, err := image.Build(spec)
	if err != nil {
		return err
	}
	if err := image.WriteArchive(*out, img, tags...); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", *out, tags[0], d)
	return nil
}

type multi []string

func (m *multi) String() string     { return fmt.Sprint(*m) }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
