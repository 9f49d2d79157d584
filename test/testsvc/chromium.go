package testsvc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ChromiumChoice is what FindChromium (and FindTool, for any Debian tool) looks at, in order.
type ChromiumChoice struct {
	Env   string   // CHROMIUM: used as it is; it must exist
	Names []string // looked up in PATH
	// Install is the Debian package installed with apt-get when nothing was found, when this
	// process runs as root and apt-get exists; "" never installs.
	Install string
	AptGet  string // the apt-get to run; "" looks it up in PATH (tests pass a stand-in)
	// Missing is the error when nothing was found nor installed (nil: ErrNoChromium).
	Missing error
}

// ChromiumNames are the browsers looked for in PATH: Debian's and Ubuntu's Chromium, Chrome.
var ChromiumNames = []string{"chromium", "chromium-browser", "google-chrome"}

// ErrNoChromium is the one line a machine without Chromium gets when it cannot be installed.
var ErrNoChromium = errors.New("no Chromium (none of " + strings.Join(ChromiumNames, ", ") + " in PATH, and this is " +
	"not root with apt-get to install it): install it with `apt-get update && apt-get install -y chromium` " +
	"(or set CHROMIUM to a Chromium binary); the browser tests never skip")

var (
	chromiumOnce sync.Once
	chromiumPath string
	chromiumErr  error
)

// Chromium returns the browser of the browser tests, found once per process: CHROMIUM, else the
// first of ChromiumNames in PATH, else Debian's chromium, installed here when the tests run as
// root on a machine with apt-get (as `go tool task test` promises to need nothing set up
// beyond PostgreSQL's and Redis's reach); else ErrNoChromium.
func Chromium(ctx context.Context) (string, error) {
	chromiumOnce.Do(func() {
		o, err := DefaultOptions()
		if err != nil {
			chromiumErr = err
			return
		}
		chromiumPath, chromiumErr = FindChromium(ctx, o,
			ChromiumChoice{Env: os.Getenv("CHROMIUM"), Names: ChromiumNames, Install: "chromium"}, terminal())
	})
	return chromiumPath, chromiumErr
}

// FindChromium picks the browser by ch, installing ch.Install when allowed and nothing was
// found; say gets a line before and after an installation (it takes minutes).
func FindChromium(ctx context.Context, o Options, ch ChromiumChoice, say io.Writer) (string, error) {
	return FindTool(ctx, o, ch, say)
}

// FindTool picks a program by ch as FindChromium does: ch.Env, else ch.Names in PATH, else
// Debian's ch.Install, installed once per machine when this runs as root with apt-get; else
// ch.Missing.
func FindTool(ctx context.Context, o Options, ch ChromiumChoice, say io.Writer) (string, error) {
	if ch.Missing == nil {
		ch.Missing = ErrNoChromium
	}
	if ch.Env != "" {
		if _, err := os.Stat(ch.Env); err != nil {
			return "", fmt.Errorf("CHROMIUM=%s: %w: point it at a Chromium binary or unset it", ch.Env, err)
		}
		return ch.Env, nil
	}
	if p, ok := lookPath(ch.Names); ok {
		return p, nil
	}
	if ch.Install == "" || os.Geteuid() != 0 {
		return "", ch.Missing
	}
	aptGet := ch.AptGet
	if aptGet == "" {
		var err error
		if aptGet, err = exec.LookPath("apt-get"); err != nil {
			return "", ch.Missing
		}
	}
	// One test process installs; another waits, then finds what the first installed.
	unlock, err := lockFor(ctx, o.Dir, ch.Install, installWait)
	if err != nil {
		return "", err
	}
	defer unlock()
	if p, ok := lookPath(ch.Names); ok {
		return p, nil
	}
	began := time.Now()
	fmt.Fprintf(say, "testsvc: %s missing: installing Debian's %s (apt-get update && apt-get install -y --no-install-recommends %s), once for this machine\n",
		ch.Names[0], ch.Install, ch.Install)
	for _, args := range [][]string{
		{"update", "-q"},
		// Another apt (a second checkout's tests, an unattended upgrade) holding dpkg's lock is
		// waited for rather than failing the install. Recommends stay out: with them Debian's
		// chromium pulled 114 packages (avahi-daemon, CUPS helpers, Samba libraries, Perl and
		// Python modules) and was not done after 4 minutes here; headless Chromium needs only
		// its dependencies (fontconfig brings a font).
		{"install", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=300", ch.Install},
	} {
		// Not under ctx: a test's deadline killing dpkg halfway leaves the machine's packages
		// half configured (dpkg --configure -a). The test binary's -timeout still bounds it.
		cmd := exec.Command(aptGet, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("apt-get %s: %w (%s); install it yourself:\n%s",
				strings.Join(args, " "), err, time.Since(began).Round(time.Second), tail(out.String(), 20))
		}
	}
	p, ok := lookPath(ch.Names)
	if !ok {
		return "", fmt.Errorf("apt-get installed %s but none of %s is in PATH", ch.Install, strings.Join(ch.Names, ", "))
	}
	fmt.Fprintf(say, "testsvc: installed %s in %s: %s\n", ch.Install, time.Since(began).Round(time.Second), p)
	return p, nil
}

// installWait is how long another process waits for an installation.
const installWait = 15 * time.Minute

func lookPath(names []string) (string, bool) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, true
		}
	}
	return "", false
}

// terminal is where a test process says what takes long: the controlling terminal when there
// is one (go test shows a passing package's output only with -v), else stderr.
func terminal() io.Writer {
	if f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		return f // open for the process's life: a handful of lines, once
	}
	return os.Stderr
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
