package emails

import (
	"slices"
	"testing"
)

// TestDefaultTemplates would catch a default the operator's create would refuse (seeding a
// new company would then fail), two defaults of one name (the unique index), or a default
// whose placeholder is misspelt into text (no {{key}} left in it).
func TestDefaultTemplates(t *testing.T) {
	var names []string
	for _, d := range DefaultTemplates() {
		if err := d.Validate(); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		if slices.Contains(names, d.Name) {
			t.Errorf("%s twice", d.Name)
		}
		names = append(names, d.Name)
		if !slices.Contains(Placeholders(d.Subject, d.Text), "user.name") {
			t.Errorf("%s: no signature placeholder user.name in %v", d.Name, Placeholders(d.Subject, d.Text))
		}
	}
	if len(names) < 6 {
		t.Errorf("%d defaults, want at least 6", len(names))
	}
}
