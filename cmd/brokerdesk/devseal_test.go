package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDevSeal: dev makes its seal key and certificate once in the data directory and reuses
// them on the next run, makes them again when they are unusable, and takes SIGNING_KEY_FILE
// and SIGNING_CERT_FILE as given. It catches a dev server whose sealed PDFs change signer on
// every restart, one stuck with a broken certificate, and one that ignores the operator's.
func TestDevSeal(t *testing.T) {
	dir := t.TempDir()
	none := func(string) string { return "" }
	key, cert, err := devSeal(none, dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v: want mode 0600", st, err)
	}
	_, cert2, err := devSeal(none, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(cert2); !bytes.Equal(first, again) {
		t.Error("the second run made another certificate")
	}

	if err := os.WriteFile(key, []byte("broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := devSeal(none, dir); err != nil {
		t.Fatal(err)
	}
	if renewed, _ := os.ReadFile(cert); bytes.Equal(first, renewed) {
		t.Error("an unusable key was kept")
	}

	set := map[string]string{"SIGNING_KEY_FILE": "/etc/seal.key", "SIGNING_CERT_FILE": "/etc/seal.crt"}
	k, c, err := devSeal(func(k string) string { return set[k] }, t.TempDir())
	if err != nil || k != set["SIGNING_KEY_FILE"] || c != set["SIGNING_CERT_FILE"] {
		t.Errorf("devSeal = %s, %s, %v; want the configured files", k, c, err)
	}
}
