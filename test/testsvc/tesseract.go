package testsvc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ErrNoTesseract is the one line a machine without Tesseract and its German model gets when
// they cannot be installed: the extraction tests run the OCR path for real (scans of rendered
// policies) and never skip.
var ErrNoTesseract = errors.New("no Tesseract with German (tesseract not in PATH or `tesseract --list-langs` " +
	"without deu, and this is not root with apt-get to install them): install them with " +
	"`apt-get update && apt-get install -y tesseract-ocr tesseract-ocr-deu`; the OCR tests never skip")

var (
	tesseractOnce sync.Once
	tesseractPath string
	tesseractErr  error
)

// Tesseract returns the path of a tesseract binary that has the deu (German) model, found once
// per process in PATH, else installed with apt-get (tesseract-ocr, then tesseract-ocr-deu, which
// only recommends the engine) when the tests run as root, as Chromium is; else ErrNoTesseract.
func Tesseract(ctx context.Context) (string, error) {
	tesseractOnce.Do(func() {
		o, err := DefaultOptions()
		if err != nil {
			tesseractErr = err
			return
		}
		say := terminal()
		p, err := FindTool(ctx, o, ChromiumChoice{Names: []string{"tesseract"}, Install: "tesseract-ocr",
			Missing: ErrNoTesseract}, say)
		if err != nil {
			tesseractErr = err
			return
		}
		if !hasDeu(ctx, p) {
			if err := installDeu(ctx, o, say); err != nil {
				tesseractErr = err
				return
			}
			if !hasDeu(ctx, p) {
				tesseractErr = fmt.Errorf("apt-get installed tesseract-ocr-deu but %s --list-langs has no deu", p)
				return
			}
		}
		tesseractPath = p
	})
	return tesseractPath, tesseractErr
}

// hasDeu says whether tesseract lists the German model.
func hasDeu(ctx context.Context, tesseract string) bool {
	out, err := exec.CommandContext(ctx, tesseract, "--list-langs").CombinedOutput()
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) == "deu" {
			return true
		}
	}
	return false
}

// installDeu installs Debian's tesseract-ocr-deu as root, under the same machine-wide lock as
// FindTool's installs (two test packages never run apt-get at once).
func installDeu(ctx context.Context, o Options, say interface{ Write([]byte) (int, error) }) error {
	aptGet, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		return ErrNoTesseract
	}
	unlock, err := lockFor(ctx, o.Dir, "tesseract-ocr-deu", installWait)
	if err != nil {
		return err
	}
	defer unlock()
	began := time.Now()
	fmt.Fprintf(say, "testsvc: tesseract has no deu: installing Debian's tesseract-ocr-deu, once for this machine\n")
	for _, args := range [][]string{
		{"update", "-q"},
		{"install", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=300", "tesseract-ocr-deu"},
	} {
		cmd := exec.Command(aptGet, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w (%s); install it yourself:\n%s",
				strings.Join(args, " "), err, time.Since(began).Round(time.Second), tail(out.String(), 20))
		}
	}
	return nil
}
