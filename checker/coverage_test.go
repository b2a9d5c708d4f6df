package checker

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCoverageJSON reads back what Coverage writes, and of several unknown
// scene names always names the least, whatever order the map gives them.
func TestCoverageJSON(t *testing.T) {
	var c Coverage
	c[0], c[3] = 7, 2
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Coverage
	if err := json.Unmarshal(b, &back); err != nil || back != c {
		t.Fatalf("%s read back as %v (%v), want %v", b, back, err, c)
	}
	bad := `{"zz":1,"mm":1,"qq":1,"aa":1,"tt":1,"cc":1,"xx":1,"ee":1}`
	for range 40 {
		err := json.Unmarshal([]byte(bad), &back)
		if err == nil || !strings.Contains(err.Error(), `"aa"`) {
			t.Fatalf("eight unknown scenes: %v, want the least, \"aa\", named", err)
		}
	}
}
