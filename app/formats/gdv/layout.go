package gdv

//go:generate go run ./internal/layoutgen -o layouts_gen.go spec/VUVM2023.xml spec/VUVM2009.xml

// FieldType is the GDV data type of a field ("Datentyp" in the GDV description).
type FieldType uint8

// The GDV data types.
const (
	// Alnum is "Alphanumerisch": text, left-aligned, blank-filled.
	Alnum FieldType = iota + 1
	// Numeric is "Numerisch": digits, right-aligned, zero-filled; mostly codes and counts.
	Numeric
	// Amount is "Fliesskomma": digits with implied decimal places (Field.Decimals).
	Amount
	// DateField is "Datum": TTMMJJJJ (8 bytes) or MMJJJJ (6 bytes).
	DateField
)

// String returns the GDV name of the type.
func (t FieldType) String() string {
	switch t {
	case Alnum:
		return "Alphanumerisch"
	case Numeric:
		return "Numerisch"
	case Amount:
		return "Fliesskomma"
	case DateField:
		return "Datum"
	}
	return "unknown"
}

// Field is one field of a Teildatensatz: 1-based position and length in characters, as the GDV
// documents them.
type Field struct {
	Pos      int
	Len      int
	Type     FieldType
	Decimals int
	Tech     string // technical name ("technischerName"), e.g. "Vertragsstatus"
	Name     string // German name, e.g. "Vertragsstatus"
}

// TD is one Teildatensatz (part record) of a record type.
type TD struct {
	Nr int
	// NrPos is the 1-based position of this part's Satznummer field, 0 when the layout has
	// none. It is 256 for most record types but not for all (0220.030 part 3 has it at 43,
	// 0500 part 1 at 66): the part number is read where the layout of (Satzart, Sparte) says.
	NrPos  int
	Fields []Field
}

// Layout is one record type of the GDV description: a Satzart, for the line-specific
// Satzarten per Sparte (and for life insurance per Wagnisart and part number).
type Layout struct {
	// Key names the record type as the GDV does: "0100", "0220.030", "0220.010.13.1",
	// "0220.020.1" (Kranken, by Folgenummer), "0220.580.01" (Bausparen, by Art).
	Key     string
	Satzart string
	Sparte  string // "" for record types valid for every Sparte
	Version string // version of the record type in the release the table was built from
	TDs     []TD
}

// TD returns the Teildatensatz numbered nr, or nil.
func (l *Layout) TD(nr int) *TD {
	for i := range l.TDs {
		if l.TDs[i].Nr == nr {
			return &l.TDs[i]
		}
	}
	return nil
}

// Field returns the field with the technical name tech, or nil.
func (t *TD) Field(tech string) *Field {
	for i := range t.Fields {
		if t.Fields[i].Tech == tech {
			return &t.Fields[i]
		}
	}
	return nil
}

// LayoutFor returns the layout of a record type by its GDV key ("0200", "0220.030",
// "0220.010.13.1"), or nil when the GDV description has no such record type.
func LayoutFor(key string) *Layout {
	if i := layoutIndex(key); i >= 0 {
		return &layouts[i]
	}
	return nil
}

// Layouts returns every record type of the GDV description, in the order of the description.
// The slice and its layouts must not be modified.
func Layouts() []Layout { return layouts[:] }

// LayoutRelease is the GDV release ("Stand") the layout tables were generated from.
func LayoutRelease() string { return layoutStand }
