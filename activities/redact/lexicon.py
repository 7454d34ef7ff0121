"""Given names: the lexicon that finds a person's name in prose, with no label beside it.

Measured against the alternatives (issue #28): a statistical recogniser needs a
model (spaCy's official ones are not on PyPI; GLiNER and Flair download
theirs at run time; Presidio wraps spaCy; torch is out of the install), while
a person named in a referral, a letter or an annotation is nearly always a
given name followed by a surname. So a name is a word of this list followed
by one or two capitalised words (``activities.redact.names``). The list is
a few hundred of the given names most common across English-, Spanish-,
Arabic-, South and East Asian- and Malay-speaking patients; a name it does not
hold is still found beside a label or a title, and the check re-runs the same
rules on the view, so a miss costs recall, never a view marked clean that the
rules would catch.

Given names that are mostly common words (``May``, ``Will``, ``Hope``) are left
out: prose is full of them before a capitalised word.
"""

from __future__ import annotations

_NAMES = """
aaron abdul abdullah abigail abraham adam adrian ahmad ahmed aiden aisha alan albert alberto
alejandro alex alexander alexandra alexis ali alice alicia alina alison amanda amber amelia amina
amir amit amy ana andre andrea andreas andrew andy angela angelo anil anita ann anna anne annie
anthony antonio anya arjun arthur ashley aziz barbara beatriz ben benjamin bernard beth betty
bianca bob brandon brenda brian bruce bruno caitlin callum cameron camila carla carlos carmen
carol caroline carolyn catherine charles charlie charlotte chen cheng chloe chris christian
christina christine christopher cindy claire clara claudia colin connor craig cristina cynthia
daniel daniela danielle daphne david deborah debra deepak denise dennis derek diana diane diego
dimitri dmitri donald donna dorothy douglas dylan edward elena eli elijah elizabeth ella ellen
emily emma eric erica erik ethan eugene eva evelyn fatima felix fernando fiona francesca
francisco frederick gabriel gabriela gail gareth gary george georgia gerald gloria gordon
gregory hamza hannah harold harry hassan heather helen henry hiroshi holly howard hugo hussein
ian ibrahim igor irene isaac isabel isabella ivan jack jacob james jamie jane janet janice jason
javier jeffrey jennifer jeremy jessica joan joanna joe john jonathan jorge jose joseph joshua
joyce juan judith julia julian julie justin karen karim katherine kathleen kathryn katie kelly
kenji kenneth kevin khalid kim kimberly kyle laura lauren lee leila leon leonard liam lily linda
lisa logan lucas lucia lucy luis luke lynn madison maria mariam marie marina mario marisa marta
martha martin mary mason matthew megan melissa mia michael michelle miguel mohamed mohammad
mohammed muhammad nadia nancy naomi natalia natalie nathan neil nicholas nicole nikolai nina
noah noor nora norma oliver olivia omar oscar owen pablo pamela paolo patricia patrick paul paula
pedro peter philip priya rachel rahul raj rajesh ralph ramon rana raquel rashid rebecca richard
rita robert roberto robin roger ronald rosa ruby russell ruth ryan sadia sakura samantha samir
samuel sandra sara sarah scott sean sergei sergio shanti sharon shirley simon sofia sophia sophie
stephanie stephen steven stuart susan sunil tanya tara teresa thomas timothy tina tomas tony
tracy tyler valentina vanessa vera victor victoria vijay vincent virginia walter wei william
xavier yasmin yusuf yuki zainab zara zoe
ahmad aminah azlan azman faridah farid hafiz hamid haslinda kamal lim nur nurul rahman rosli
siti tan wong zainal zulkifli
"""

#: Given names, lower case.
GIVEN_NAMES: frozenset[str] = frozenset(_NAMES.split())
