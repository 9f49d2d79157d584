package testsvc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeExe writes an executable shell script name into dir and returns its path.
func fakeExe(t *testing.T, dir, name, script string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeAptGet is an apt-get stand-in that logs its arguments and DEBIAN_FRONTEND to log and, on
// install, takes a moment and puts a "chromium" into bin, as Debian's package puts one into
// /usr/bin.
func fakeAptGet(t *testing.T, dir, log, bin string) string {
	return fakeExe(t, dir, "apt-get", `echo "$DEBIAN_FRONTEND $*" >> `+log+`
case "$1" in install) /bin/sleep 0.3; printf '#!/bin/sh\n' > `+bin+`/chromium; /bin/chmod 755 `+bin+`/chromium;; esac
`)
}

// The browser of the browser tests: CHROMIUM as it is (a missing one is an error naming it),
// else the first name found in PATH, else Debian's installed as root (saying so), else the one
// line that says what to install. The bug it guards: `go tool task test` failed on a fresh
// machine in test/browser ("no Chromium at /usr/bin/chromium").
func TestFindChromium_Choice(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin) // nothing of the machine's: its Chromium, if any, is not found
	o := Options{Dir: filepath.Join(dir, "data")}
	env := fakeExe(t, dir, "my-chrome", "")

	t.Run("CHROMIUM is used as it is", func(t *testing.T) {
		if p, err := FindChromium(ctx, o, ChromiumChoice{Env: env, Names: ChromiumNames}, os.Stderr); err != nil || p != env {
			t.Errorf("got %q, %v; want %s", p, err, env)
		}
	})
	t.Run("a missing CHROMIUM is an error naming it", func(t *testing.T) {
		_, err := FindChromium(ctx, o, ChromiumChoice{Env: filepath.Join(dir, "nope"), Names: ChromiumNames}, os.Stderr)
		if err == nil || !strings.Contains(err.Error(), "CHROMIUM=") {
			t.Errorf("got %v, want an error naming CHROMIUM", err)
		}
	})
	t.Run("none and no installing: the one line saying what to install", func(t *testing.T) {
		_, err := FindChromium(ctx, o, ChromiumChoice{Names: ChromiumNames}, os.Stderr)
		if !errors.Is(err, ErrNoChromium) || !strings.Contains(err.Error(), "apt-get install -y chromium") {
			t.Errorf("got %v, want ErrNoChromium", err)
		}
	})
	t.Run("installed as root, saying so; else the one line", func(t *testing.T) {
		log := filepath.Join(dir, "apt.log")
		var said bytes.Buffer
		p, err := FindChromium(ctx, o, ChromiumChoice{Names: ChromiumNames, Install: "chromium",
			AptGet: fakeAptGet(t, dir, log, bin)}, &said)
		if os.Geteuid() != 0 {
			if !errors.Is(err, ErrNoChromium) {
				t.Errorf("not root: got %q, %v; want ErrNoChromium", p, err)
			}
			return
		}
		if err != nil || p != filepath.Join(bin, "chromium") {
			t.Fatalf("got %q, %v; want %s installed", p, err, filepath.Join(bin, "chromium"))
		}
		if !strings.Contains(said.String(), "installing Debian's chromium") || !strings.Contains(said.String(), "installed chromium in") {
			t.Errorf("said %q, want the installation announced and its end", said.String())
		}
		calls, _ := os.ReadFile(log)
		if want := "noninteractive update -q\nnoninteractive install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 chromium\n"; string(calls) != want {
			t.Errorf("apt-get ran as %q, want %q", calls, want)
		}
		if p, err := FindChromium(ctx, o, ChromiumChoice{Names: ChromiumNames, Install: "chromium"}, &said); err != nil || p != filepath.Join(bin, "chromium") {
			t.Errorf("afterwards: %q, %v; want the installed one found in PATH", p, err)
		}
	})
}

// Parallel test binaries without Chromium install it once: the first takes the lock and runs
// apt-get, the others wait and find what it installed.
func TestFindChromium_InstallsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "apt.log")
	results := RunProcesses(ctx, t, 3, "TestHelperChromium", "PATH="+bin,
		"TESTSVC_CHROMIUM_DIR="+filepath.Join(dir, "data"), "TESTSVC_CHROMIUM_APT="+fakeAptGet(t, dir, log, bin))
	calls, _ := os.ReadFile(log)
	for i, r := range results {
		if os.Geteuid() != 0 {
			if r.Describe != ErrNoChromium.Error() {
				t.Errorf("process %d, not root: %+v, want ErrNoChromium", i, r)
			}
			continue
		}
		if r.URL != filepath.Join(bin, "chromium") {
			t.Errorf("process %d: %+v, want %s", i, r, filepath.Join(bin, "chromium"))
		}
	}
	if n := strings.Count(string(calls), " install "); os.Geteuid() == 0 && n != 1 {
		t.Errorf("apt-get install ran %d times, want once:\n%s", n, calls)
	}
}

// TestHelperChromium is one test binary of a parallel run (TestFindChromium_InstallsOnce).
func TestHelperChromium(t *testing.T) {
	dir := os.Getenv("TESTSVC_CHROMIUM_DIR")
	if dir == "" {
		return // not a helper
	}
	p, err := FindChromium(context.Background(), Options{Dir: dir},
		ChromiumChoice{Names: ChromiumNames, Install: "chromium", AptGet: os.Getenv("TESTSVC_CHROMIUM_APT")}, os.Stderr)
	s := Service{URL: p}
	if err != nil {
		s.Describe = err.Error()
	}
	PrintResult(s)
}
