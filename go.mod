module fencecheck

go 1.26.8

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
