package turn

// EndPayloads exposes endPayloads to the external tests.
var EndPayloads = endPayloads
