package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Default limits of Inspect.
const (
	DefaultMaxBytes = 20 << 20
	DefaultMaxPages = 200
)

// The codes of RefusedError.
const (
	RefusedNotPDF       = "not_pdf"
	RefusedEncrypted    = "encrypted"
	RefusedJavaScript   = "javascript"
	RefusedTooManyPages = "too_many_pages"
	RefusedTooLarge     = "too_large"
)

// config is pdfcpu's configuration built here rather than by model.NewDefaultConfiguration,
// which creates a configuration directory under the user's home (or a global switch turns
// that off). Values as pdfcpu's defaults, with tighter resource limits: a 20 MB upload must
// not make the server decode half a gigabyte.
func config() *model.Configuration {
	lim := model.DefaultResourceLimits()
	lim.MaxStreamBytes = 128 << 20
	lim.MaxDecodeBytes = 128 << 20
	lim.MaxImageBytes = 128 << 20
	lim.MaxImagePixels = 64 << 20
	lim.MaxObjectCount = 2_000_000
	lim.MaxXRefEntries = 2_000_000
	return &model.Configuration{
		CreationDate:                    "",
		Version:                         model.VersionStr,
		Reader15:                        true,
		ValidationMode:                  model.ValidationRelaxed,
		UnsupportedResourcePolicy:       model.UnsupportedResourceSkip,
		Eol:                             types.EolLF,
		WriteObjectStream:               true,
		WriteXRefStream:                 true,
		EncryptUsingAES:                 true,
		EncryptKeyLength:                256,
		Permissions:                     model.PermissionsPrint,
		TimestampFormat:                 "2006-01-02 15:04",
		DateFormat:                      "2006-01-02",
		Optimize:                        true,
		OptimizeBeforeWriting:           true,
		OptimizeResourceDicts:           true,
		OptimizeDuplicateContentStreams: false,
		MergeBookmarkMode:               model.MergeBookmarkModeWrap,
		Offline:                         true,
		Timeout:                         5,
		TimeoutCRL:                      10,
		TimeoutOCSP:                     10,
		PreferredCertRevocationChecker:  model.CRL,
		Limits:                          lim,
	}
}

// Inspect checks that content is a PDF the service may have signed (not encrypted, no
// JavaScript or other active content, within limits), reading it with bounded memory: the
// size is checked before anything is parsed. Every refusal is a *RefusedError.
func Inspect(content []byte, l Limits) (info Info, err error) {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if int64(len(content)) > l.MaxBytes {
		return Info{}, &RefusedError{Code: RefusedTooLarge,
			Reason: fmt.Sprintf("the file has %d bytes, more than the %d a document to sign may have", len(content), l.MaxBytes)}
	}
	// The header may follow up to 1024 bytes of junk (ISO 32000-1, annex H.3, item 3).
	if !bytes.Contains(content[:min(len(content), 1024)], []byte("%PDF-")) {
		return Info{}, notPDF()
	}
	// pdfcpu panics on some malformed input; a refusal, not a crash, is the answer to it.
	defer func() {
		if r := recover(); r != nil {
			info, err = Info{}, notPDF()
		}
	}()
	ctx, err := pdfcpu.Read(bytes.NewReader(content), config())
	if err != nil {
		if errors.Is(err, pdfcpu.ErrWrongPassword) || errors.Is(err, pdfcpu.ErrOwnerPasswordRequired) ||
			errors.Is(err, pdfcpu.ErrEncrypted) {
			return Info{}, encrypted()
		}
		return Info{}, notPDF()
	}
	if ctx.Encrypt != nil || ctx.E != nil {
		// Readable with an empty user password but still encrypted: a PAdES seal over it and
		// the signers' view of it cannot be trusted to match.
		return Info{}, encrypted()
	}
	if err := ctx.EnsurePageCount(); err != nil {
		return Info{}, notPDF()
	}
	if ctx.PageCount > l.MaxPages {
		return Info{}, &RefusedError{Code: RefusedTooManyPages,
			Reason: fmt.Sprintf("the document has %d pages, more than the %d a document to sign may have", ctx.PageCount, l.MaxPages)}
	}
	if ctx.PageCount < 1 {
		return Info{}, notPDF()
	}
	what, err := activeContent(ctx.XRefTable)
	if err != nil {
		return Info{}, notPDF()
	}
	if what != "" {
		return Info{}, &RefusedError{Code: RefusedJavaScript,
			Reason: "the document contains active content (" + what + "), which a document to sign may not have"}
	}
	dims, err := ctx.PageDims()
	if err != nil || len(dims) != ctx.PageCount {
		return Info{}, notPDF()
	}
	info = Info{Pages: len(dims), Sizes: make([][2]float64, len(dims))}
	for i, d := range dims {
		info.Sizes[i] = [2]float64{d.Width, d.Height}
	}
	return info, nil
}

func notPDF() *RefusedError {
	return &RefusedError{Code: RefusedNotPDF, Reason: "the file is not a readable PDF"}
}

func encrypted() *RefusedError {
	return &RefusedError{Code: RefusedEncrypted, Reason: "the PDF is encrypted or password protected"}
}

// Keys and action types that run code or act on their own when a viewer opens, shows or
// prints the document: JavaScript (document, page, annotation, form field actions), additional
// actions (AA: page open/close, field keystroke…), launching programs, submitting or
// importing form data, XFA forms (which carry scripts) and rich media.
var (
	activeKeys    = map[string]bool{"JS": true, "JavaScript": true, "AA": true, "XFA": true}
	activeActions = map[string]bool{"JavaScript": true, "Launch": true, "SubmitForm": true,
		"ImportData": true, "RichMediaExecute": true}
)

// activeContent walks every object of the document (pdfcpu has read them all, names
// unescaped) and names the first active content it finds, or "".
// Walking the objects, not grepping bytes, finds what compression or #-escaped names hide.
func activeContent(xt *model.XRefTable) (string, error) {
	for _, e := range xt.Table {
		if e == nil || e.Free || e.Object == nil {
			continue
		}
		o := e.Object
		if l, ok := o.(types.LazyObjectStreamObject); ok {
			// An object in an object stream is parsed on first use; parse it now (its stream
			// was decoded within the configured limits).
			d, err := l.DecodedObject(context.Background())
			if err != nil {
				return "", err
			}
			o = d
		}
		if what := activeIn(o, 0); what != "" {
			return what, nil
		}
	}
	return "", nil
}

func activeIn(o types.Object, depth int) string {
	if depth > 64 { // objects nest by reference; inline nesting this deep is an attack
		return "nesting"
	}
	var d types.Dict
	switch v := o.(type) {
	case types.Dict:
		d = v
	case types.StreamDict:
		d = v.Dict
	case *types.StreamDict:
		d = v.Dict
	case types.ObjectStreamDict:
		d = v.Dict
	case types.XRefStreamDict:
		d = v.Dict
	case types.Array:
		for _, x := range v {
			if what := activeIn(x, depth+1); what != "" {
				return what
			}
		}
		return ""
	default:
		return ""
	}
	for k, v := range d {
		if activeKeys[k] {
			return "/" + k
		}
		if k == "S" {
			if n, ok := v.(types.Name); ok && activeActions[string(n)] {
				return "/S /" + string(n)
			}
		}
		if k == "Subtype" {
			if n, ok := v.(types.Name); ok && n == "RichMedia" {
				return "/RichMedia"
			}
		}
		if what := activeIn(v, depth+1); what != "" {
			return what
		}
	}
	return ""
}
