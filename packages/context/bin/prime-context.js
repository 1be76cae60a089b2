#!/usr/bin/env node
// Stays in place before the build, so npm can link the command on a fresh install.
import { runFromProcess } from "../dist/cli/main.js";

runFromProcess();
