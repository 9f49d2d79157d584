package schematype

// FinanceItem is one entry of a household finance list (income, expenses, assets,
// liabilities, real estate). Flows (income, expenses) have Amount per Interval; stocks
// (assets, real estate, liabilities) have Amount as value or remaining debt, and a liability
// may carry the MonthlyPayment that serves it.
type FinanceItem struct {
	Type           string `json:"type"`
	Description    string `json:"description,omitempty"`
	Amount         Money  `json:"amount"`
	Interval       string `json:"interval,omitempty"`
	MonthlyPayment *Money `json:"monthlyPayment,omitempty"`
}
