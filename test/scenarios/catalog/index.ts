import type { Scenario } from '../types.ts';
import { healthcare } from './healthcare.ts';
import { realEstate } from './real-estate.ts';
import { rentals } from './rentals.ts';
import { support } from './support.ts';

/** Every scenario, by domain. */
export const SCENARIOS: Scenario[] = [...realEstate, ...healthcare, ...rentals, ...support];
