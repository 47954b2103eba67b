package vocab

// countLong is the merge of countShort in O(n log n), for long pieces (a
// run of spaces or symbols, a long word or encoded blob): the parts are a
// linked list and the candidate pairs a heap ordered by rank, then
// position, so that merges happen in the same order.
func (e Encoding) countLong(piece string) int {
	if _, ok := e.Rank(piece); ok {
		return 1
	}
	n := int32(len(piece))
	// node i is the part starting at byte i while it exists: next is the
	// start of the part after it (n at the end), rank that of the pair
	// it starts (noRank once absorbed).
	type node struct {
		prev, next int32
		rank       uint32
	}
	nodes := make([]node, n+1)
	for i := range nodes {
		nodes[i] = node{int32(i) - 1, int32(i) + 1, noRank}
	}
	pair := func(i int32) uint32 {
		j := nodes[i].next
		if j >= n {
			return noRank
		}
		if r, ok := e.Rank(piece[i:nodes[j].next]); ok {
			return r
		}
		return noRank
	}
	h := make(pairHeap, 0, n)
	for i := range n - 1 {
		if r := pair(i); r != noRank {
			nodes[i].rank = r
			h = append(h, candidate{r, i})
		}
	}
	h.init()
	parts := int(n)
	for len(h) > 0 {
		c := h.pop()
		if nodes[c.at].rank != c.rank {
			continue // stale: the pair at c.at changed since
		}
		i := c.at
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k < n {
			nodes[k].prev = i
		}
		parts--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			if nodes[b].rank = pair(b); nodes[b].rank != noRank {
				h.push(candidate{nodes[b].rank, b})
			}
		}
	}
	return parts
}

type candidate struct {
	rank uint32
	at   int32
}

// pairHeap is a binary min-heap of candidates by rank, then position
// (typed, unlike container/heap, so that a push does not allocate).
type pairHeap []candidate

func (h pairHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].at < h[b].at
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *pairHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
