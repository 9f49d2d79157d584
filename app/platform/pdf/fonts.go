package pdf

import (
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
)

// The Go fonts (BSD licence, in golang.org/x/image) cover Latin-1, Latin Extended, Greek and
// Cyrillic, the Euro sign and typographic punctuation: everything a German contract needs,
// embedded so that no viewer substitutes a font.
const family = "go"

func newDoc() *fpdf.Fpdf {
	f := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "mm", SizeStr: "A4"})
	addFonts(f)
	f.SetMargins(marginX, marginTop, marginX)
	f.SetCatalogSort(true)
	return f
}

// addFonts embeds the fonts (regular, bold; italic only rasterised in TypedSignature) and sets what every document of ours
// shares: no cell padding, no automatic page breaks (the layout breaks pages itself).
func addFonts(f *fpdf.Fpdf) {
	f.AddUTF8FontFromBytes(family, "", goregular.TTF)
	f.AddUTF8FontFromBytes(family, "B", gobold.TTF)
	f.SetCellMargin(0)
	f.SetAutoPageBreak(false, 0)
	f.SetProducer("BrokerDesk", false)
}

// epoch is the date of documents whose date means nothing (overlays) or was not given: fpdf
// would read the clock, and a fixed date keeps the bytes a function of the input.
var epoch = time.Unix(0, 0).UTC()

// coverage is the set of runes the regular font has glyphs for (bold and italic cover the
// same set), parsed once: it is read-only after.
var coverage = sync.OnceValue(func() func(rune) bool {
	fnt, err := sfnt.Parse(goregular.TTF)
	if err != nil {
		panic("pdf: embedded Go font: " + err.Error())
	}
	var mu sync.Mutex
	var buf sfnt.Buffer
	return func(r rune) bool {
		if r > 0xFFFF { // fpdf writes UTF-16 code units as CIDs: no room for surrogate pairs
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		g, err := fnt.GlyphIndex(&buf, r)
		return err == nil && g != 0
	}
})

// printable replaces the runes the font has no glyph for with "?", so that the text layer and
// the picture say the same thing (a missing glyph would print as an empty box while
// pdftotext still gives the rune back).
func printable(s string) string {
	has := coverage()
	ok := true
	for _, r := range s {
		if r >= 0x80 && !has(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r < 0x80 || has(r) {
			return r
		}
		return '?'
	}, s)
}
