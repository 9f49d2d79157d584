package pdf

import (
	"bytes"
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// Validate checks content against the PDF specification as `pdfcpu validate` does (strict
// mode). The tests of every area that makes PDFs call it.
func Validate(content []byte) error {
	conf := config()
	conf.ValidationMode = model.ValidationStrict
	conf.Optimize = false
	if err := api.Validate(bytes.NewReader(content), conf); err != nil {
		return fmt.Errorf("pdf: validate: %w", err)
	}
	return nil
}
