package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"

	"codeberg.org/go-pdf/fpdf"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Merge concatenates PDFs in order into one.
func Merge(docs [][]byte) (out []byte, err error) {
	if len(docs) == 0 {
		return nil, errors.New("pdf: merge: no documents")
	}
	rs := make([]io.ReadSeeker, len(docs))
	for i, d := range docs {
		rs[i] = bytes.NewReader(d)
	}
	var buf bytes.Buffer
	if err := api.MergeRaw(rs, &buf, false, config()); err != nil {
		return nil, fmt.Errorf("pdf: merge: %w", err)
	}
	return buf.Bytes(), nil
}

// Limits of a signature image: a drawn signature is a few hundred pixels; anything larger is
// refused before it is decoded (a PNG header can promise gigapixels).
const maxImageSide = 4000

// Stamp places the appearances on their pages: each PNG scaled into its field's rectangle
// (aspect ratio kept, centred) above a one-line caption in small text, inside the rectangle.
// The appearances are drawn on an overlay page per stamped page, which pdfcpu lays over the
// page as a stamp: content and fonts of the original stay untouched.
func Stamp(content []byte, apps []Appearance) ([]byte, error) {
	if len(apps) == 0 {
		return content, nil
	}
	ctx, err := pdfcpu.Read(bytes.NewReader(content), config())
	if err != nil {
		return nil, fmt.Errorf("pdf: stamp: read: %w", err)
	}
	if err := ctx.EnsurePageCount(); err != nil {
		return nil, fmt.Errorf("pdf: stamp: %w", err)
	}
	dims, err := ctx.PageDims()
	if err != nil {
		return nil, fmt.Errorf("pdf: stamp: page sizes: %w", err)
	}
	// Overlay pages in the order of the pages they stamp.
	byPage := map[int][]Appearance{}
	var pages []int
	for _, a := range apps {
		p := a.Field.Page
		if p < 1 || p > len(dims) {
			return nil, fmt.Errorf("pdf: stamp: field on page %d of a %d-page document", p, len(dims))
		}
		if _, seen := byPage[p]; !seen {
			pages = append(pages, p)
		}
		byPage[p] = append(byPage[p], a)
	}
	f := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "pt", SizeStr: "A4"})
	addFonts(f)
	f.SetCatalogSort(true)
	f.SetCreationDate(epoch)
	f.SetModificationDate(epoch)
	for _, p := range pages {
		w, h := dims[p-1].Width, dims[p-1].Height
		f.AddPageFormat("P", fpdf.SizeType{Wd: w, Ht: h})
		for i, a := range byPage[p] {
			if err := drawAppearance(f, fmt.Sprintf("sig-%d-%d", p, i), a, w, h); err != nil {
				return nil, err
			}
		}
	}
	var overlay bytes.Buffer
	if err := f.Output(&overlay); err != nil {
		return nil, fmt.Errorf("pdf: stamp: overlay: %w", err)
	}
	m := map[int]*model.Watermark{}
	for i, p := range pages {
		wm, err := api.PDFWatermarkForReadSeeker(bytes.NewReader(overlay.Bytes()), i+1,
			"position:bl, offset:0 0, scalefactor:1 abs, rotation:0, opacity:1", true, false, types.POINTS)
		if err != nil {
			return nil, fmt.Errorf("pdf: stamp: %w", err)
		}
		m[p] = wm
	}
	var out bytes.Buffer
	if err := api.AddWatermarksMap(bytes.NewReader(content), &out, m, config()); err != nil {
		return nil, fmt.Errorf("pdf: stamp: %w", err)
	}
	return out.Bytes(), nil
}

// drawAppearance draws one appearance on the current overlay page of w x h points.
func drawAppearance(f *fpdf.Fpdf, name string, a Appearance, w, h float64) error {
	img, err := cleanPNG(a.PNG)
	if err != nil {
		return fmt.Errorf("pdf: stamp: signature image: %w", err)
	}
	x, y := a.Field.X*w, a.Field.Y*h
	fw, fh := a.Field.Width*w, a.Field.Height*h
	// The caption takes a strip at the bottom of the field: 7 pt, smaller when the field is
	// narrow, never under 4 pt.
	size := 7.0
	caption := printable(cleanValue(a.Caption))
	f.SetFont(family, "", size)
	if cw := f.GetStringWidth(caption); cw > fw && cw > 0 {
		size = max(4, size*fw/cw)
		f.SetFont(family, "", size)
	}
	capH := 0.0
	if caption != "" {
		capH = size * 1.3
	}
	ih := fh - capH
	if ih <= 0 {
		ih, capH = fh, 0
	}
	f.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(img.data))
	scale := min(fw/float64(img.w), ih/float64(img.h))
	iw, ihh := float64(img.w)*scale, float64(img.h)*scale
	f.ImageOptions(name, x+(fw-iw)/2, y+(ih-ihh)/2, iw, ihh, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	if capH > 0 {
		f.SetTextColor(40, 40, 40)
		f.SetXY(x, y+ih)
		f.CellFormat(fw, capH, caption, "", 0, "C", false, 0, "")
		f.SetTextColor(0, 0, 0)
	}
	return f.Error()
}

type cleanImage struct {
	data []byte
	w, h int
}

// cleanPNG decodes a PNG within size limits and encodes it again as 8-bit RGBA: fpdf reads
// neither 16-bit nor interlaced PNGs, and a signature drawn in a browser may be either.
func cleanPNG(b []byte) (cleanImage, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return cleanImage{}, err
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > maxImageSide || cfg.Height > maxImageSide {
		return cleanImage{}, fmt.Errorf("%d x %d pixels, at most %d per side", cfg.Width, cfg.Height, maxImageSide)
	}
	src, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return cleanImage{}, err
	}
	dst := image.NewNRGBA(src.Bounds())
	draw.Draw(dst, dst.Bounds(), src, src.Bounds().Min, draw.Src)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return cleanImage{}, err
	}
	return cleanImage{data: out.Bytes(), w: cfg.Width, h: cfg.Height}, nil
}
