package check

import "testing"

func TestValidIBAN(t *testing.T) {
	for in, want := range map[string]bool{"DE89370400440532013000": true, "DE89 3704 0044 0532 0130 00": true,
		"de89370400440532013000": true, "DE88370400440532013000": false, "DE8937040044053201300": false,
		"GB82WEST12345698765432": true, "XX": false, "": false} {
		if got := ValidIBAN(in); got != want {
			t.Errorf("ValidIBAN(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestValidTaxID(t *testing.T) {
	for in, want := range map[string]bool{"86095742719": true, "86095742718": false, "06095742719": false,
		"12345678901": false, "8609574271": false, "47036892816": true, "65929970489": true, "1a345678901": false} {
		if got := ValidTaxID(in); got != want {
			t.Errorf("ValidTaxID(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestValidBICAndSVNR(t *testing.T) {
	for in, want := range map[string]bool{"COBADEFFXXX": true, "COBADEFF": true, "COBADE": false, "cobadeffxxx": true} {
		if got := ValidBIC(in); got != want {
			t.Errorf("ValidBIC(%q) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]bool{"65170839J003": true, "65 170839 J 003": true, "65171339J003": false, "651708390003": false} {
		if got := ValidSVNR(in); got != want {
			t.Errorf("ValidSVNR(%q) = %v, want %v", in, got, want)
		}
	}
}
