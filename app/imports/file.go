package imports

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"

	"github.com/brokerdesk/brokerdesk/app/formats/portfoliocsv"
)

// Formats of an import file, decided by its content, never by its name.
const (
	FormatCSV  = "csv"
	FormatXLSX = "xlsx"
)

// Encodings a CSV file is read in (ContactImport.encoding). "mixed": UTF-8 cells beside cells
// in the single-byte charset; each cell is read in whichever it is.
const (
	EncodingUTF8    = "utf-8"
	EncodingWindows = "windows-1252"
	EncodingLatin9  = "iso-8859-15"
	EncodingMixed   = "mixed"
)

// errUnreadable marks an error that is the file's: the same file gives it again, so the import
// fails with its message instead of being retried.
var errUnreadable = errors.New("unreadable")

func unreadable(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUnreadable, fmt.Sprintf(format, a...))
}

// sniff decides the format from the first bytes of a file, or refuses it: a PDF, a legacy
// Excel (.xls, OLE2) or other binary file is 422 at upload. A ZIP is taken for xlsx here; its
// parts are checked when the workbook is opened.
func sniff(head []byte) (string, error) {
	switch {
	case len(head) == 0:
		return "", fmt.Errorf("the file is empty")
	case bytes.HasPrefix(head, []byte("%PDF")):
		return "", fmt.Errorf("the file is a PDF: upload a CSV file or an Excel workbook (.xlsx)")
	case bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}):
		return "", fmt.Errorf("the file is a legacy Excel workbook (.xls) or another OLE2 document: save it as .xlsx or CSV")
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return FormatXLSX, nil
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return "", fmt.Errorf("the file is UTF-16 text: save it as CSV in UTF-8 or Windows-1252")
	case bytes.IndexByte(head, 0) >= 0:
		return "", fmt.Errorf("the file is neither CSV text nor an Excel workbook (.xlsx)")
	}
	return FormatCSV, nil
}

// table is a file read as rows: the header first, then data rows with their row number in the
// file (the header is row 1, as a spreadsheet numbers it).
type table struct {
	Format    string
	Encoding  string // CSV only
	Delimiter string // CSV only
	Header    []string
	next      func() ([]string, int, error) // io.EOF after the last row
	close     func()
}

// Next returns the next data row and its row number; io.EOF after the last one. A row may
// have fewer or more cells than the header (ragged): the caller decides.
func (t *table) Next() ([]string, int, error) { return t.next() }

// Close releases the workbook's temporary files.
func (t *table) Close() {
	if t.close != nil {
		t.close()
	}
}

// openTable reads r, a file of format, up to its header row. An error that is the file's
// wraps errUnreadable.
func openTable(format string, r io.Reader) (*table, error) {
	var t *table
	var err error
	if format == FormatXLSX {
		t, err = openXLSX(r)
	} else {
		t, err = openCSV(r)
	}
	if err != nil {
		return nil, err
	}
	t.Header = headerNames(t.Header)
	if len(t.Header) == 0 {
		t.Close()
		return nil, unreadable("the first row, the header naming the columns, is empty")
	}
	if len(t.Header) > MaxColumns {
		t.Close()
		return nil, unreadable("the header row has %d columns; at most %d are read", len(t.Header), MaxColumns)
	}
	return t, nil
}

// headerNames trims the header cells and makes them unique names (the mapping names columns
// by header): an empty header is "Spalte N", a repeated one "Name (2)". Trailing empty
// headers are dropped (spreadsheets export them for formatted but empty columns).
func headerNames(h []string) []string {
	for len(h) > 0 && strings.TrimSpace(h[len(h)-1]) == "" {
		h = h[:len(h)-1]
	}
	out := make([]string, len(h))
	seen := map[string]bool{}
	for i, c := range h {
		c = strings.TrimSpace(c)
		if c == "" {
			c = fmt.Sprintf("Spalte %d", i+1)
		}
		name := c
		for n := 2; seen[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s (%d)", c, n)
		}
		seen[strings.ToLower(name)] = true
		out[i] = name
	}
	return out
}

// openCSV reads a CSV file: a UTF-8 byte order mark is dropped; the delimiter is the one of
// ; , tab | that splits the first lines most consistently (sniffDelimiter); each cell is UTF-8
// when its bytes are, else decoded in the file's single-byte charset (detectCharset), so a file
// whose rows were pasted together from two exports reads right in both.
func openCSV(r io.Reader) (*table, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(3); bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
	head, _ := br.Peek(64 << 10)
	enc, dec := detectCharset(head)
	comma, skip := sniffDelimiter(head)
	if skip > 0 {
		_, _ = br.Discard(skip)
	}
	lim := &portfoliocsv.RecordLimit{R: br}
	cr := csv.NewReader(lim)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	decode := func(rec []string) {
		for i, c := range rec {
			if !utf8.ValidString(c) {
				if s, err := dec.NewDecoder().String(c); err == nil {
					rec[i] = s
				}
			}
		}
	}
	read := func() ([]string, int, error) {
		rec, err := cr.Read()
		lim.Reset()
		switch {
		case errors.Is(err, io.EOF):
			return nil, 0, io.EOF
		case errors.Is(err, portfoliocsv.ErrRecordTooLong):
			return nil, 0, unreadable("a row is longer than 1 MiB: the file is not a CSV of contacts")
		case err != nil:
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, 0, unreadable("the file is not valid CSV: %v", pe)
			}
			return nil, 0, err // the storage's: worth another attempt
		}
		line, _ := cr.FieldPos(0)
		decode(rec)
		return rec, line, nil
	}
	header, _, err := read()
	if errors.Is(err, io.EOF) {
		return nil, unreadable("the file holds no header row")
	}
	if err != nil {
		return nil, err
	}
	return &table{Format: FormatCSV, Encoding: enc, Delimiter: string(comma), Header: header, next: read}, nil
}

// detectCharset names the encoding of a CSV file's first bytes and the single-byte charset
// its non-UTF-8 cells are decoded in. Bytes 0x80–0x9F are letters and the euro sign in
// Windows-1252 but control codes in ISO-8859-15, so they decide for Windows-1252; without them,
// the letters only ISO-8859-15 has there (€ Š š Ž ž Œ œ Ÿ at A4, A6, A8, B4, B8, BC–BE) decide
// for it; otherwise Windows-1252, the same as ISO-8859-15 for every German letter.
func detectCharset(head []byte) (string, *charmap.Charmap) {
	multi, invalid, c1, latin9 := 0, 0, false, false
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			if len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:]) {
				i = len(head) // a sequence cut by the window
				continue
			}
			invalid++
			b := head[i]
			c1 = c1 || (b >= 0x80 && b <= 0x9F)
			latin9 = latin9 || bytes.IndexByte([]byte{0xA4, 0xA6, 0xA8, 0xB4, 0xB8, 0xBC, 0xBD, 0xBE}, b) >= 0
		case n > 1:
			multi++
		}
		i += n
	}
	cm, name := charmap.Windows1252, EncodingWindows
	if !c1 && latin9 {
		cm, name = charmap.ISO8859_15, EncodingLatin9
	}
	switch {
	case invalid == 0:
		return EncodingUTF8, cm
	case multi > 0:
		return EncodingMixed, cm
	}
	return name, cm
}

// sniffDelimiter finds the delimiter among ; , tab and |: an Excel "sep=X" first line names it
// (skip: its length, to be skipped); otherwise the candidate found the same number of times,
// outside quotes, in each of the first ten records, the most frequent one among those; failing
// that the most frequent in the header; ';' (what German Excel writes) when none occurs.
func sniffDelimiter(head []byte) (comma rune, skip int) {
	if low := bytes.ToLower(head); bytes.HasPrefix(low, []byte("sep=")) && len(head) >= 5 {
		if c := rune(head[4]); strings.ContainsRune(";,\t|", c) {
			n := 5
			for n < len(head) && (head[n] == '\r' || head[n] == '\n') {
				n++
				if head[n-1] == '\n' {
					break
				}
			}
			return c, n
		}
	}
	cands := []rune{';', ',', '\t', '|'}
	var records []map[rune]int
	cur := map[rune]int{}
	quoted := false
	complete := false
	for _, b := range head {
		switch {
		case b == '"':
			quoted = !quoted
		case quoted:
		case b == '\n':
			if len(cur) > 0 || len(records) == 0 {
				records = append(records, cur)
			}
			cur = map[rune]int{}
			complete = true
		case strings.ContainsRune(";,\t|", rune(b)):
			cur[rune(b)]++
		}
		if len(records) >= 10 {
			break
		}
	}
	if !complete || len(records) == 0 { // one line only, cut or not
		records = append(records, cur)
	}
	best, bestN := ';', 0
	for _, c := range cands {
		n := records[0][c]
		if n == 0 {
			continue
		}
		same := true
		for _, r := range records[1:] {
			same = same && r[c] == n
		}
		if same && n > bestN {
			best, bestN = c, n
		}
	}
	if bestN > 0 {
		return best, 0
	}
	for _, c := range cands {
		if records[0][c] > bestN {
			best, bestN = c, records[0][c]
		}
	}
	return best, 0
}

// openXLSX reads the first sheet of a workbook with excelize's streaming row reader: cached
// cell values only (a formula is never evaluated; one without a cached value reads empty), and
// a text cell starting with = or + stays that text. r is read whole (at most MaxXLSX): the
// ZIP's directory is at its end. The sheet's XML streams from a temporary file.
func openXLSX(r io.Reader) (*table, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxXLSX+1))
	if err != nil {
		return nil, err // the storage's
	}
	if int64(len(b)) > MaxXLSX {
		return nil, unreadable("the workbook is larger than %d MiB: save it as CSV", MaxXLSX>>20)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, unreadable("the file is a damaged ZIP archive, not an Excel workbook (.xlsx)")
	}
	parts := map[string]bool{}
	for _, f := range zr.File {
		parts[f.Name] = true
	}
	if !parts["[Content_Types].xml"] || !parts["xl/workbook.xml"] {
		return nil, unreadable("the file is a ZIP archive but not an Excel workbook (.xlsx): it lacks the workbook parts")
	}
	f, err := excelize.OpenReader(bytes.NewReader(b))
	if err != nil {
		return nil, unreadable("the Excel workbook cannot be read: %v", err)
	}
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		_ = f.Close()
		return nil, unreadable("the workbook has no sheet")
	}
	rows, err := f.Rows(sheets[0])
	if err != nil {
		_ = f.Close()
		return nil, unreadable("the first sheet cannot be read: %v", err)
	}
	closeAll := func() { _ = rows.Close(); _ = f.Close() }
	n := 0
	read := func() ([]string, int, error) {
		if !rows.Next() {
			if err := rows.Error(); err != nil {
				return nil, 0, unreadable("the first sheet cannot be read: %v", err)
			}
			return nil, 0, io.EOF
		}
		n++
		cells, err := rows.Columns()
		if err != nil {
			return nil, 0, unreadable("row %d of the first sheet cannot be read: %v", n, err)
		}
		return cells, n, nil
	}
	header, _, err := read()
	if errors.Is(err, io.EOF) {
		closeAll()
		return nil, unreadable("the first sheet holds no header row")
	}
	if err != nil {
		closeAll()
		return nil, err
	}
	return &table{Format: FormatXLSX, Header: header, next: read, close: closeAll}, nil
}
