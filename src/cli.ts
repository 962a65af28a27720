#!/usr/bin/env node
/**
 * `gwapi`'s entry point: the heap first (heap.ts), then the command line (program.ts), loaded only
 * after it so that a process that replaces itself has not loaded the rest for nothing.
 */
import { withServiceHeap } from './heap.js';

withServiceHeap();
await import('./program.js');
