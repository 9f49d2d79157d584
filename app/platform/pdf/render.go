package pdf

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"codeberg.org/go-pdf/fpdf"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Page geometry in millimetres (A4 portrait).
const (
	pageW     = 210.0
	pageH     = 297.0
	marginX   = 20.0
	marginTop = 20.0
	bottom    = pageH - 25 // the last 25 mm hold the footer
	textW     = pageW - 2*marginX

	bodySize, bodyLead = 10.5, 5.0
	h1Size, h1Lead     = 16.0, 8.0
	h2Size, h2Lead     = 12.5, 6.5
	smallSize          = 8.0
	paraGap            = 3.0
	bulletIndent       = 5.0

	sigW, sigH   = 70.0, 22.0 // the signature field: room for a signature image
	sigBefore    = 6.0        // space above a box, for the pen
	sigCaptionH  = 6.0        // the caption under the line
	ruleH        = 4.0
	headingAfter = 1.5
)

// op is one drawing operation of a laid-out page.
type op struct {
	line       bool // a stroke from (x, y) to (x2, y2); else text
	x, y, w    float64
	x2, y2     float64
	style      string
	size, lead float64
	text       string
	gray       bool
	png        []byte // an image of w x h (already a clean 8-bit PNG)
	h          float64
}

// layout is a laid-out document: the drawing operations per page and the signature fields.
type layout struct {
	pages  [][]op
	fields []schematype.SignatureField
	y      float64
	empty  bool // nothing on the current page yet
	gap    bool // a paragraph gap is due before the next block
}

func (l *layout) newPage() {
	l.pages = append(l.pages, nil)
	l.y, l.empty, l.gap = marginTop, true, false
}

// room moves to a new page unless h more millimetres fit on this one (an empty page takes
// anything: a block taller than a page is cut rather than looping).
func (l *layout) room(h float64) {
	if l.y+h > bottom && !l.empty {
		l.newPage()
	}
}

// block starts a block: the pending paragraph gap, unless at the top of a page.
func (l *layout) block(extra float64) {
	if !l.empty {
		if l.gap {
			l.y += paraGap
		}
		l.y += extra
	}
	l.gap = false
}

func (l *layout) add(o op) {
	l.pages[len(l.pages)-1] = append(l.pages[len(l.pages)-1], o)
	l.empty = false
}

// Render fills body's placeholders with values in one pass (a value is printed literally,
// never read as markup or placeholders) and lays it out. A placeholder without a value is an
// *UnfilledError naming every such placeholder; a body Check refuses is its *MarkupError.
func Render(body string, values map[string]string, meta Meta) (Rendered, error) {
	lines, err := parse(body)
	if err != nil {
		return Rendered{}, err
	}
	missing := map[string]bool{}
	texts := make([]string, len(lines))
	for i, ln := range lines {
		if ln.parts != nil {
			texts[i] = printable(fill(ln, values, missing))
		}
	}
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for n := range missing {
			names = append(names, n)
		}
		slices.Sort(names)
		return Rendered{}, &UnfilledError{Names: names}
	}

	f := newDoc()
	lay := layoutLines(f, lines, texts)
	setMeta(f, meta)
	write(f, lay.pages, pageFooter)
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		return Rendered{}, fmt.Errorf("pdf: write: %w", err)
	}
	return Rendered{PDF: buf.Bytes(), Pages: len(lay.pages), Fields: lay.fields}, nil
}

func setMeta(f *fpdf.Fpdf, meta Meta) {
	created := meta.CreatedAt
	if created.IsZero() {
		created = epoch
	}
	f.SetCreationDate(created.UTC())
	f.SetModificationDate(created.UTC())
	f.SetTitle(meta.Title, true)
	if meta.Author != "" {
		f.SetAuthor(meta.Author, true)
	}
	if meta.Subject != "" {
		f.SetSubject(meta.Subject, true)
	}
	f.SetLang("de-DE")
}

func layoutLines(f *fpdf.Fpdf, lines []line, texts []string) *layout {
	lay := &layout{}
	lay.newPage()
	for i, ln := range lines {
		switch ln.kind {
		case kindBlank:
			lay.gap = !lay.empty
		case kindPageBreak:
			if !lay.empty {
				lay.newPage()
			}
		case kindRule:
			lay.block(0)
			lay.room(ruleH)
			lay.add(op{line: true, x: marginX, y: lay.y + ruleH/2, x2: pageW - marginX, y2: lay.y + ruleH/2})
			lay.y += ruleH
		case kindSignature:
			lay.block(0)
			lay.room(sigBefore + sigH + sigCaptionH)
			if !lay.empty {
				lay.y += sigBefore
			}
			top := lay.y
			lay.add(op{line: true, x: marginX, y: top + sigH, x2: marginX + sigW, y2: top + sigH})
			lay.add(op{x: marginX, y: top + sigH + 0.5, w: sigW, style: "", size: smallSize, lead: 4,
				text: printable("Unterschrift " + roleLabel(ln.role)), gray: true})
			lay.fields = append(lay.fields, schematype.SignatureField{
				Role: ln.role, Page: len(lay.pages),
				X: marginX / pageW, Y: top / pageH, Width: sigW / pageW, Height: sigH / pageH,
			})
			lay.y = top + sigH + sigCaptionH
		case kindH1:
			lay.block(2)
			lay.flow(f, texts[i], "B", h1Size, h1Lead, 0, bodyLead)
			lay.y += headingAfter
		case kindH2:
			lay.block(1)
			lay.flow(f, texts[i], "B", h2Size, h2Lead, 0, bodyLead)
			lay.y += headingAfter
		case kindBullet:
			lay.block(0)
			lay.room(bodyLead)
			lay.add(op{x: marginX + 1, y: lay.y, w: bulletIndent, size: bodySize, lead: bodyLead, text: "•"})
			lay.flow(f, texts[i], "", bodySize, bodyLead, bulletIndent, 0)
		case kindText:
			lay.block(0)
			lay.flow(f, texts[i], "", bodySize, bodyLead, 0, 0)
		}
	}
	return lay
}

// flow wraps text (lines broken at \n, then at the width) from the current position. keep is
// room to keep after the first line (a heading stays with the line under it).
func (l *layout) flow(f *fpdf.Fpdf, text, style string, size, lead, indent, keep float64) {
	f.SetFont(family, style, size)
	w := textW - indent
	first := true
	for _, piece := range strings.Split(text, "\n") {
		wrapped := f.SplitText(piece, w)
		if len(wrapped) == 0 {
			wrapped = []string{""}
		}
		for _, s := range wrapped {
			if first {
				l.room(lead + keep)
				first = false
			} else {
				l.room(lead)
			}
			if s != "" {
				l.add(op{x: marginX + indent, y: l.y, w: w, style: style, size: size, lead: lead, text: s})
			} else {
				l.empty = false
			}
			l.y += lead
		}
	}
}

// write draws the pages, each with its footer; the page count is known from the layout, so
// the footer needs no alias that a value could contain.
func write(f *fpdf.Fpdf, pages [][]op, footer func(page, pages int) string) {
	f.SetLineWidth(0.3)
	for i, ops := range pages {
		f.AddPage()
		for j, o := range ops {
			switch {
			case o.line:
				f.Line(o.x, o.y, o.x2, o.y2)
			case o.png != nil:
				name := fmt.Sprintf("img-%d-%d", i, j)
				f.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(o.png))
				f.ImageOptions(name, o.x, o.y, o.w, o.h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
			default:
				drawText(f, o)
			}
		}
		drawText(f, op{x: marginX, y: pageH - 15, w: textW, size: smallSize, lead: 5,
			text: footer(i+1, len(pages)), gray: true, style: "C"})
	}
}

func pageFooter(page, pages int) string { return fmt.Sprintf("Seite %d von %d", page, pages) }

// drawText writes one line of text; style "C" is the regular font centred.
func drawText(f *fpdf.Fpdf, o op) {
	align, style := "L", o.style
	if style == "C" {
		align, style = "C", ""
	}
	f.SetFont(family, style, o.size)
	if o.gray {
		f.SetTextColor(90, 90, 90)
	}
	f.SetXY(o.x, o.y)
	f.CellFormat(o.w, o.lead, o.text, "", 0, align, false, 0, "")
	if o.gray {
		f.SetTextColor(0, 0, 0)
	}
}
