package explore

import (
	"strconv"

	"github.com/fencecheck/fencecheck/checker"
)

// parseShard parses the value of --shard (search, sweep): "i/n", exactly
// two unsigned decimal integers separated by one '/', with 0 <= i < n.
// Nothing else is taken: no sign, no space, no third part, no suffix
// (fmt.Sscanf's "%d/%d" read "1/2/3", "1/2abc" and " 1/2" as 1/2). Its
// error is a usage error naming the flag and the value.
func parseShard(s string) (checker.Shard, error) {
	bad := func(why string) (checker.Shard, error) {
		return checker.Shard{}, usagef("--shard %q: %s; want i/n, two unsigned decimal integers with 0 <= i < n", s, why)
	}
	slash := -1
	for k, c := range s {
		switch {
		case c == '/' && slash < 0:
			slash = k
		case c == '/':
			return bad("more than one '/'")
		case c < '0' || c > '9':
			return bad(strconv.QuoteRune(c) + " is not a decimal digit")
		}
	}
	if slash < 0 {
		return bad("no '/'")
	}
	is, ns := s[:slash], s[slash+1:]
	if is == "" || ns == "" {
		return bad("a number is missing")
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil {
		return bad("a number is out of range")
	}
	if n < 1 {
		return bad("n must be at least 1")
	}
	if i >= n {
		return bad("i must be below n")
	}
	return checker.Shard{I: i, N: n}, nil
}
