// Package web holds web_extract, which fetches one http(s) URL under the
// Host's URL policy and returns its readable text.
package web
