// Package demiurgetest is the kit the tests of several packages share
// instead of copying it: a real SQLite runtime store in a temporary
// directory, a manual clock, a fixed approver that records what it was
// asked, and fake provider scripts.
//
// It is test code only (internal/deps places it in the test layer) and is
// imported by external test packages (package x_test), never by the
// package it helps test from inside.
package demiurgetest
