package testsvc

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
)

// ErrNoPoppler is the one line a machine without Debian's poppler-utils gets when they cannot
// be installed: the PDF tests check our PDFs with pdftotext, pdffonts and pdfsig, tools nobody
// here wrote, and never skip.
var ErrNoPoppler = errors.New("no poppler-utils (pdftotext, pdffonts, pdfsig not in PATH, and this is not root " +
	"with apt-get to install them): install them with `apt-get update && apt-get install -y poppler-utils`; " +
	"the PDF tests never skip")

var (
	popplerOnce sync.Once
	popplerDir  string
	popplerErr  error
)

// Poppler returns the directory holding Debian's poppler-utils (pdftotext, pdffonts, pdfsig,
// pdfinfo), found once per process in PATH, else installed with apt-get when the tests run as
// root (as Chromium is); else ErrNoPoppler.
func Poppler(ctx context.Context) (string, error) {
	popplerOnce.Do(func() {
		o, err := DefaultOptions()
		if err != nil {
			popplerErr = err
			return
		}
		var p string
		p, popplerErr = FindTool(ctx, o, ChromiumChoice{Names: []string{"pdfsig"}, Install: "poppler-utils",
			Missing: ErrNoPoppler}, terminal())
		popplerDir = filepath.Dir(p)
	})
	return popplerDir, popplerErr
}
