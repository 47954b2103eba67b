package vocab

//go:generate go run ./gen
