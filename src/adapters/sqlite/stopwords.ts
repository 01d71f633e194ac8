/** The keyword legs share one stopword list with memory's fact and turn search. */
export { STOPWORDS } from '../../core/stopwords.ts';
