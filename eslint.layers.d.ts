// Types of eslint.layers.js, for the test that checks its rules (test/layers.test.ts).
import type { Linter } from 'eslint';

export declare const LAYERS: Readonly<Record<string, readonly string[]>>;
export declare function unitOf(path: string): string;
export declare function layerConfigs(): Linter.Config[];
