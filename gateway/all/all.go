// Package all registers every gateway mode; import it for its side effect.
package all
