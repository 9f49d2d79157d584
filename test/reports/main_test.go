// Package reports tests the five reports under /reports (issue 24): their numbers on fixtures
// of several contract types, insurers, owners and payment frequencies, their windows and
// paging, what an agent's credential sees of them, and every error case.
package reports

import (
	"os"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }
