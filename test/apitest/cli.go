package apitest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// CLI runs the brokerdesk binary (built once, as for StartProcess) with args against the
// package database, DATABASE_URL being its owner as for operator commands, and returns what it
// printed. A non-zero exit fails the test with the output.
func (e *Env) CLI(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+e.OwnerURL, "LOG_LEVEL=warn")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("brokerdesk %v: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
