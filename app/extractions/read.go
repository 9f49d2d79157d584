package extractions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/sync/errgroup"
)

// Bounds of the reading (docs/decisions/extraction.md "OCR"):
const (
	// MaxPages is how many pages are read: policies put their data on the first pages; the
	// rest (conditions, AVB) would cost OCR time for nothing.
	MaxPages = 10
	// minTextRunes: a text layer with fewer letters and digits than this per page read is a
	// scan (or an image-only PDF), and the pages are OCRed.
	minTextRunes = 40
	// toolTimeout bounds one subprocess (pdftotext of the document, pdftoppm or tesseract of one
	// page): a 300 dpi A4 page takes Tesseract a few seconds.
	toolTimeout = 60 * time.Second
	// memLimit is the address space one subprocess may have (prlimit --as): Tesseract on a
	// 300 dpi A4 page needs ~150 MB; a hostile image cannot take the machine.
	memLimit = 1 << 30
	// renderPixels is the long side, in pixels, a page is rendered to for OCR (pdftoppm
	// -scale-to): an A4 page at 300 dpi, Tesseract's recommended resolution. Bounding the pixels
	// rather than fixing the dpi keeps an oversized page (a scan stored at 72 ppi: 23 by 32
	// inches) from becoming a 7,000 by 10,000 pixel image that costs seconds to render and OCR.
	renderPixels = 3508
)

// Reader runs poppler and Tesseract as subprocesses. Empty paths are looked up in PATH when
// first needed; a missing tool fails the extraction with a message naming it.
type Reader struct {
	PdfToText, PdfToPPM, PdfInfo, Tesseract, Prlimit string
}

// ocrSlots bounds the Tesseract processes of this process: one a core.
var ocrSlots = make(chan struct{}, max(runtime.NumCPU(), 1))

// errNoTool marks a tool the server lacks: the extraction fails (refunded) naming it.
var errNoTool = errors.New("missing tool")

// debianPackage names the package of each tool, for the failure's message.
var debianPackage = map[string]string{"pdftotext": "poppler-utils", "pdftoppm": "poppler-utils",
	"pdfinfo": "poppler-utils", "tesseract": "tesseract-ocr tesseract-ocr-deu", "prlimit": "util-linux"}

// errUnreadable marks a document the tools cannot read (not the server's fault: the
// extraction fails, the points are refunded, no retry).
var errUnreadable = errors.New("unreadable document")

func (r Reader) tool(path, name string) (string, error) {
	if path != "" {
		return path, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not installed on the server (Debian: %s)", errNoTool, name, debianPackage[name])
	}
	return p, nil
}

// run runs the tool with args in dir under the time and memory limits: prlimit --as when
// available (util-linux), an empty environment but OMP_THREAD_LIMIT=1 (Tesseract uses one core
// a page: two workers share the machine with the API) and the tessdata path of the system.
func (r Reader) run(ctx context.Context, dir string, stdin []byte, tool string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	name, argv := tool, args
	if pl, err := r.tool(r.Prlimit, "prlimit"); err == nil {
		name, argv = pl, append([]string{"--as=" + strconv.Itoa(memLimit), "--", tool}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = dir
	cmd.Env = []string{"OMP_THREAD_LIMIT=1", "PATH=/usr/bin:/bin"}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s did not finish within %s", errUnreadable, filepath.Base(tool), toolTimeout)
		}
		return nil, fmt.Errorf("%w: %s: %v: %s", errUnreadable, filepath.Base(tool), err, firstLine(stderr.String()))
	}
	return out.Bytes(), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Text is what Read found: the text of each page read, and the method (text or ocr).
type Text struct {
	Pages  []string
	Method string
	Total  int // the document's pages
}

// Read reads a PDF's text layer page by page (pdftotext -layout, pages split at form feeds);
// when it holds fewer than minTextRunes letters a page, the pages are rendered at 300 dpi
// for A4 (pdftoppm, renderPixels) and OCRed with Tesseract (German), the pages side by side. An image is OCRed as one
// page.
func (r Reader) Read(ctx context.Context, mediaType string, content []byte) (Text, error) {
	dir, err := os.MkdirTemp("", "extraction-")
	if err != nil {
		return Text{}, err
	}
	defer os.RemoveAll(dir)
	if mediaType != "application/pdf" {
		// Tesseract reads PNG, JPEG and TIFF itself (leptonica).
		if err := os.WriteFile(filepath.Join(dir, "scan"), content, 0o600); err != nil {
			return Text{}, err
		}
		t, err := r.ocr(ctx, dir, "scan")
		if err != nil {
			return Text{}, err
		}
		return Text{Pages: []string{t}, Method: "ocr", Total: 1}, nil
	}
	if err := os.WriteFile(filepath.Join(dir, "doc.pdf"), content, 0o600); err != nil {
		return Text{}, err
	}
	pdftotext, err := r.tool(r.PdfToText, "pdftotext")
	if err != nil {
		return Text{}, err
	}
	total, err := r.pageCount(ctx, dir)
	if err != nil {
		return Text{}, err
	}
	n := min(total, MaxPages)
	out, err := r.run(ctx, dir, nil, pdftotext, "-q", "-layout", "-enc", "UTF-8", "-f", "1", "-l", strconv.Itoa(n), "doc.pdf", "-")
	if err != nil {
		return Text{}, err
	}
	pages := strings.Split(strings.ToValidUTF8(string(out), " "), "\f")
	if len(pages) > n {
		pages = pages[:n] // the form feed after the last page
	}
	if letters(pages) >= minTextRunes*n {
		return Text{Pages: pages, Method: "text", Total: total}, nil
	}
	pdftoppm, err := r.tool(r.PdfToPPM, "pdftoppm")
	if err != nil {
		return Text{}, err
	}
	// Render every page first (fast), then OCR them side by side: Tesseract runs on one core
	// (OMP_THREAD_LIMIT=1, where its own threads cost more than they give), so the pages of one
	// scan share the machine's cores, and ocrSlots bounds the Tesseracts of all extractions of
	// the process together.
	for p := 1; p <= n; p++ {
		ps := strconv.Itoa(p)
		if _, err := r.run(ctx, dir, nil, pdftoppm, "-q", "-scale-to", strconv.Itoa(renderPixels), "-gray", "-png", "-singlefile",
			"-f", ps, "-l", ps, "doc.pdf", "page-"+ps); err != nil {
			return Text{}, err
		}
	}
	pages = make([]string, n)
	g, gctx := errgroup.WithContext(ctx)
	for p := 1; p <= n; p++ {
		g.Go(func() error {
			select {
			case ocrSlots <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			defer func() { <-ocrSlots }()
			t, err := r.ocr(gctx, dir, "page-"+strconv.Itoa(p)+".png")
			pages[p-1] = t
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return Text{}, err
	}
	return Text{Pages: pages, Method: "ocr", Total: total}, nil
}

// pageCount is the PDF's number of pages (pdfinfo).
func (r Reader) pageCount(ctx context.Context, dir string) (int, error) {
	pdfinfo, err := r.tool(r.PdfInfo, "pdfinfo")
	if err != nil {
		return 0, err
	}
	out, err := r.run(ctx, dir, nil, pdfinfo, "doc.pdf")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "Pages:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: pdfinfo found no pages", errUnreadable)
}

// ocr runs Tesseract (German, automatic page segmentation) on the image file in dir.
func (r Reader) ocr(ctx context.Context, dir, file string) (string, error) {
	tess, err := r.tool(r.Tesseract, "tesseract")
	if err != nil {
		return "", err
	}
	out, err := r.run(ctx, dir, nil, tess, file, "stdout", "-l", "deu", "--psm", "3")
	if err != nil {
		return "", err
	}
	return strings.ToValidUTF8(string(out), " "), nil
}

// letters counts letters and digits.
func letters(pages []string) int {
	n := 0
	for _, p := range pages {
		for _, r := range p {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				n++
			}
		}
	}
	return n
}
