//go:build tools

// Package tools names the command hack/bisquitt.sh builds, so go.mod and go.sum keep it.
package tools

import _ "github.com/energomonitor/bisquitt/cmd/bisquitt"
