package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	_ "time/tzdata" // Europe/Berlin on the audit page must resolve without a zoneinfo database

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The typed signature image: the size of a drawn one from the signing page.
const sigImgW, sigImgH = 600, 150

// TypedSignature renders a typed name as a signature image (PNG): the name in the italic
// Go font, dark blue on a transparent background, as large as fits 600 x 150 pixels.
// Runes the font lacks print as "?"; the same name gives the same bytes.
func TypedSignature(name string) ([]byte, error) {
	name = strings.Join(strings.Fields(printable(cleanValue(name))), " ")
	if name == "" {
		return nil, errors.New("pdf: typed signature: empty name")
	}
	fnt, err := opentype.Parse(goitalic.TTF)
	if err != nil {
		return nil, fmt.Errorf("pdf: typed signature: %w", err)
	}
	const pad = 20
	size := 96.0
	var face font.Face
	for {
		face, err = opentype.NewFace(fnt, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
		if err != nil {
			return nil, fmt.Errorf("pdf: typed signature: %w", err)
		}
		if w := font.MeasureString(face, name).Ceil(); w <= sigImgW-2*pad || size <= 8 {
			break
		}
		face.Close()
		size *= 0.9
	}
	defer face.Close()
	img := image.NewNRGBA(image.Rect(0, 0, sigImgW, sigImgH))
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.NRGBA{R: 0x1a, G: 0x2a, B: 0x6c, A: 0xff}), Face: face}
	m := face.Metrics()
	w := d.MeasureString(name)
	// Centred: the text's box (ascent + descent) in the middle of the image.
	x := (fixed.I(sigImgW) - w) / 2
	y := (fixed.I(sigImgH)-(m.Ascent+m.Descent))/2 + m.Ascent
	d.Dot = fixed.Point26_6{X: x, Y: y}
	d.DrawString(name)
	var out bytes.Buffer
	if err := png.Encode(&out, img); err != nil {
		return nil, fmt.Errorf("pdf: typed signature: %w", err)
	}
	return out.Bytes(), nil
}
