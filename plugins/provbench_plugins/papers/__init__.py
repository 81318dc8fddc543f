"""One package per paper: its systems, prompts, interventions, metrics and report sections, each
package one built-in plugin that uses only the public hooks."""
