/* base.c is below everyone and calls no other file of the room */
int base_value(void) { return 7; }
