import { stem } from '../../text/stem.ts';

/**
 * Memory-domain synonym groups: every word of a group hashes to the group's first word, so
 * "What can Rajiv afford?" finds "Rajiv Kumar's budget is 80 lakhs" without a trained model.
 * Kept small and high-precision: a wrong merge costs precision on every query.
 */
const GROUPS: readonly string[] = [
  'budget price cost costs afford affordable spend spending pricing priced expensive cheap',
  'doctor physician dr gp specialist cardiologist surgeon clinician',
  'medication medicine medicines meds drug drugs pill pills tablet tablets prescription prescribed metformin insulin paracetamol ibuprofen aspirin statin atorvastatin lisinopril amlodipine amoxicillin antibiotic antibiotics omeprazole levothyroxine',
  'dose dosage mg milligram milligrams',
  'apartment flat flats condo',
  'home house houses residence villa bungalow',
  'job work works working career employer employment employed occupation profession office company',
  'children child kids kid son sons daughter daughters',
  'spouse wife husband partner married',
  'parent parents mother mom mum father dad',
  'move moved moving relocate relocated relocating relocation shift shifted shifting',
  'bedroom bedrooms bhk',
  'loan mortgage financing emi',
  'appointment consultation checkup check-up followup follow-up',
  'visit visited visiting tour viewing',
  'pain ache aches aching hurt hurts sore',
  'income salary salaries earn earns earning earnings paycheck',
  'rent rental rented renting lease leased tenancy',
  'landlord owner lessor',
  'pet pets dog dogs cat cats puppy',
  'phone mobile cell telephone',
  'email mail e-mail',
  'car vehicle',
  'school schools college university',
  'buy buying bought purchase purchasing purchased',
  'sell selling sold sale',
  'location area neighbourhood neighborhood locality region',
  'allergy allergies allergic',
  'diabetes diabetic',
  'hypertension bp',
  'hospital clinic',
  'surgery operation',
  'birthday born dob',
  'live lives living reside resides stay stays staying',
  'approved approval sanctioned sanction',
  'schedule scheduled booked booking',
];

/** stem → canonical token (the group's first word, stemmed). */
export const SYNONYMS: ReadonlyMap<string, string> = (() => {
  const map = new Map<string, string>();
  for (const group of GROUPS) {
    const words = group.split(' ');
    const canonical = stem(words[0] as string);
    for (const w of words) map.set(stem(w), canonical);
  }
  return map;
})();

/** The canonical form of a stemmed token: its synonym group's head, or itself. */
export function canonical(stemmed: string): string {
  return SYNONYMS.get(stemmed) ?? stemmed;
}
