#!/usr/bin/env node
// Stays in place before the build, so npm can link the command on a fresh install.
import "../dist/cli/main.js";
