package schematype

// CommissionIssue is one finding of a commission statement's parse: the record or row it is
// about (0: the file), warning or error, a stable code and a message.
type CommissionIssue struct {
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}
