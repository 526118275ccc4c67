// Types of eslint.layers.js, for the test that checks its rules (test/layers.test.ts).
import type { Linter } from 'eslint';

export declare const CAPABILITIES: string[];
export declare const LAYERS: Record<string, string[]>;
export declare function layerConfigs(): Linter.Config[];
